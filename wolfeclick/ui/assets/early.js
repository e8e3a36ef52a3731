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
