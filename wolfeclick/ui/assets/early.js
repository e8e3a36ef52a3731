// Runs before Gradio's own scripts: wolfeclick/ui/early_script.py puts it at the top of the page's <head>.
//
// Gradio 6.31's page loader (a status tracker shown while the app loads) starts its elapsed-time timer and is
// unmounted while still "pending", so the timer's requestAnimationFrame loop outlives it: a callback every frame
// for the page's whole life. The frame pipeline is then never idle, and a key's frame waits for the next tick
// behind the loop's (key → painted frame 25 ms instead of 20 on this machine). A status tracker's
// requestAnimationFrame is refused while no status tracker on the page shows progress: an unmounted one shows
// nothing, and a running event's tracker has content for as long as it is pending, so its timer keeps running.
(() => {
  const native = window.requestAnimationFrame;
  const TRACKER = "[data-testid=status-tracker]";
  const showing = () => {
    for (const tracker of document.querySelectorAll(TRACKER)) if (tracker.childElementCount) return true;
    return false;
  };
  window.requestAnimationFrame = function (callback) {
    if (/\/statustracker-[^/]*\.js/.test(new Error().stack || "") && !showing()) return 0;
    return native.call(window, callback);
  };
})();

// A share link's tab is shown from the first frame the tabs are drawn in. The page's load event also selects it, but
// only once its round trip is over (seconds on a busy server: "?tab=leaderboard" showed Live for 6 s). The tab
// button is clicked as soon as Gradio puts it on the page (a MutationObserver runs before the next frame is drawn),
// then the watch ends; a link naming no tab of the app's leaves the page alone.
(() => {
  const params = new URLSearchParams(location.search);
  const tab = params.has("replay") ? "replays" : params.has("policy") ? "leaderboard" : params.get("tab");
  if (!["replays", "compare", "leaderboard"].includes(tab)) return;
  const pick = () => {
    const button = document.querySelector(`button[role=tab][data-tab-id="${tab}"]`);
    if (!button) return false;
    if (button.getAttribute("aria-selected") !== "true") button.click();
    return true;
  };
  const watch = new MutationObserver(() => { if (pick()) watch.disconnect(); });
  watch.observe(document, { childList: true, subtree: true });
  setTimeout(() => watch.disconnect(), 60000);  // a page that never draws the tab: stop looking
})();
