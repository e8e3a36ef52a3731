"""``ShowdownToolEnv`` for TRL's ``GRPOTrainer(environment_factory=ShowdownToolEnv)``: a battle played by tool calls.

TRL makes one instance per rollout with no arguments, calls ``reset(**row)`` with the dataset row's columns
(``seed``, ``format``, ``opponent``, ``max_turns``, ``horizon``, team files ``team1``/``team2``/``teams`` for team
formats, ``recording`` and ``at`` to start from decision ``at`` of a recording), appends the returned text to the
prompt, and exposes every other public method as a tool whose schema comes from its docstring. Each tool call plays
one decision and returns the next state text. A call that names no legal action (or comes after the battle ended)
raises ``ValueError``; TRL shows the message to the model, and nothing is played. ``reward_func`` reads each env's
``reward`` once the rollout is over.

``reward`` is the agent's shaped reward so far plus the outcome (±10) once the battle has ended. A rollout that stops
before the battle does (out of tokens or tool calls) forfeits when the reward is read, so every rollout is a whole,
saved recording; the forfeit counts as a loss (−10), which teaches finishing battles within the budget. A rollout
with a ``horizon`` stops after that many decisions instead (the battle is forfeited and saved, and its reward is the
shaped reward over those decisions, no outcome): episodes that fit a token budget. ``reward_components`` holds the
reward's parts for reward functions that weigh them differently.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from wolfeclick.battle.runner import DEFAULT_FORMAT
from wolfeclick.battle.store import load_recording, rewrite_recording
from wolfeclick.battle.teams import TeamSources
from wolfeclick.env.env import ShowdownEnv
from wolfeclick.errors import InputError
from wolfeclick.game.actions import to_id
from wolfeclick.game.reward import COMPONENTS, outcome_reward
from wolfeclick.settings import settings

TOOL_HINT = ("Play by calling the tools: move(name) with one of the moves listed above, or switch(pokemon) with one "
             "of the Pokémon listed above. Each call returns the next battle state.")
JSON_INSTRUCTION = ("You must choose exactly one action and output pure JSON with this schema:\n\n"
                    '{"action": "move" | "switch", "choice": "Exact Name of Move or Pokemon"}\n\n')
TOOL_INSTRUCTION = "You must choose exactly one action by calling one tool.\n\n"


RESULT_MODES = ("full", "changes")
CHANGES_HEADER = "What changed since the last state (unchanged lines left out):"


def tool_text(state_text: str) -> str:
    """The env's observation as a tool result: one instruction (call a tool), not the profile's "output JSON"."""
    return f"{state_text.replace(JSON_INSTRUCTION, TOOL_INSTRUCTION, 1)}\n\n{TOOL_HINT}"


def _keyed_lines(state: str) -> list[tuple[tuple[str, str, str], str]]:
    """Each line with its place: (section header, the entry it belongs to, the line itself)."""
    out, header, entry = [], "", ""
    for line in state.splitlines():
        if line.startswith("#"):
            header, entry = line, ""
        elif line.startswith("- "):
            entry = line
        out.append(((header, entry if not line.startswith("- ") else "", line), line))
    return out


def changed_text(previous: str, current: str) -> str:
    """``current`` (a tool result) with the state lines that were already in ``previous`` left out; headers and the
    entry a changed line belongs to stay for context, and the instruction and valid options are always whole."""
    state, cut, options = current.partition(TOOL_INSTRUCTION)
    if not cut:  # not a state (the verdict at the end): whole
        return current
    seen = {key for key, _ in _keyed_lines(previous.partition(TOOL_INSTRUCTION)[0])}
    kept: list[str] = []
    shown_context: set[str] = set()
    for (header, entry, line), text in _keyed_lines(state):
        if not text.strip() or (header, entry, line) in seen:
            continue
        for context in (header, entry):
            if context and context != line and context not in shown_context:
                kept.append(context)
                shown_context.add(context)
        if line not in shown_context:
            kept.append(line)
            shown_context.add(line)
    body = "\n".join(kept) if kept else "(nothing in the state changed)"
    return f"{CHANGES_HEADER}\n{body}\n\n{TOOL_INSTRUCTION}{options}"


class ShowdownToolEnv:
    """One battle per rollout against ``opponent``; defaults can be changed by subclassing or keyword arguments."""

    default_opponent = "random"
    default_format = DEFAULT_FORMAT
    prompt = "wolfeclick-v1"
    max_turns = 100
    horizon: int | None = None
    """Stop a rollout after this many decisions (None: play the battle out); a dataset column can set it per row."""
    results = "full"
    """``full``: every tool result is the whole state; ``changes``: only the state lines that changed since the last
    result (plus the valid options), which is most of a rollout's text saved. reset's text is always whole."""

    def __init__(self, *, opponent: str | None = None, format: str | None = None, recordings: Any = None,
                 max_turns: int | None = None, horizon: int | None = None, results: str | None = None) -> None:
        self._results = results or self.results
        if self._results not in RESULT_MODES:
            raise ValueError(f"results must be one of {', '.join(RESULT_MODES)}, not {self._results!r}")
        self._opponent = opponent or settings().env_opponent or self.default_opponent
        self._format = format or self.default_format
        self._max_turns = max_turns or self.max_turns
        self._horizon_default = horizon if horizon is not None else self.horizon
        self._horizon = self._horizon_default
        self._env = ShowdownEnv(self._opponent, format=self._format, prompt=self.prompt,
                                max_turns=self._max_turns, recordings=recordings)
        self.decisions = 0
        self.cut = False
        """True when the rollout stopped at its horizon: ``reward`` is then the shaped reward of those decisions."""
        self.reward_components: dict[str, float] = {}
        """The reward's parts once the rollout is over: every shaped component summed over the agent's decisions,
        ``shaped`` (their total) and ``outcome`` (±10, 0 for a tie or a horizon cut), for reward functions."""
        self.reward = 0.0
        self.done = False
        self.illegal_calls = 0
        self.recording_path: str | None = None
        self.result: dict[str, Any] | None = None
        self._shown = self._full = ""
        """The text the model was last handed (reset's prompt part or the last tool result): what it decides on."""
        self._refused: list[dict[str, str]] = []
        """Tool calls refused since the last decision played: kept with the next decision (or the forfeit)."""
        self._calls: list[tuple[str, str, bool]] = []
        """Every tool call of the rollout in order: (tool, argument, played), to match TRL's turns to decisions."""
        self.tokens: dict[str, int] = {}
        """The rollout's true token counts once its reward is read (``reward_func``): ``completion`` is every token
        after the prompt — the model's turns and the tool results, what ``max_completion_length`` budgets (TRL's
        ``completions/mean_length`` counts the model's turns only); ``prompt`` too with
        ``prompt_keeping_reward_func``, which has the tokenizer."""

    def reset(self, **kwargs: Any) -> str:
        """Start the battle for a dataset row: ``seed`` (int), ``format``, ``opponent`` (a policy spec),
        ``max_turns`` (battle turns) and ``horizon`` (decisions before the rollout stops), each optional."""
        options: dict[str, Any] = {"max_turns": int(kwargs.get("max_turns") or self._max_turns)}
        if kwargs.get("format"):
            options["format"] = str(kwargs["format"])
        if kwargs.get("opponent"):
            options["opponent"] = str(kwargs["opponent"])
        if any(kwargs.get(key) for key in ("team1", "team2", "teams")):  # team files (paths) for team formats
            options["teams"] = TeamSources(*(Path(kwargs[key]) if kwargs.get(key) else None
                                             for key in ("team1", "team2", "teams")))
        if kwargs.get("recording"):  # start from decision ``at`` of a recording (a path): a budget-sized episode
            options.update(recording=str(kwargs["recording"]), at=int(kwargs.get("at") or 0))
        horizon = kwargs.get("horizon")
        self._horizon = int(horizon) if horizon else self._horizon_default
        options["horizon"] = self._horizon  # the env cuts the episode (Gymnasium's truncation)
        seed = kwargs.get("seed")
        text, info = self._env.reset(seed=None if seed is None else int(seed), options=options)
        self.reward, self.done, self.illegal_calls, self.decisions, self.cut = 0.0, False, 0, 0, False
        self.reward_components = {}
        self.recording_path = self.result = None
        self._refused = []
        self._calls = []
        self.tokens = {}
        self._shown = self._full = tool_text(text)
        return self._shown

    def move(self, name: str) -> str:
        """Use one of your active Pokémon's moves this turn.

        Args:
            name: The move to use, exactly as listed in the valid options (for example "thunderbolt").

        Returns:
            The battle state after the turn, with the next valid options.
        """
        return self._play("move", name)

    def switch(self, pokemon: str) -> str:
        """Switch your active Pokémon out for another one from your team.

        Args:
            pokemon: The Pokémon to switch in, exactly as listed in the valid options (for example "garchomp").

        Returns:
            The battle state after the turn, with the next valid options.
        """
        return self._play("switch", pokemon)

    # --- internals (underscored: TRL makes every public method a tool) -----------------------------------------
    def _finish(self) -> float:
        if not self.done and self._env.observation_data is not None:
            self._env.close(shown=self._shown, refused=self._refused)
            self.done = True
            end = self._env.last_end
            if end is not None:
                self._settle_end(end)
        return self.reward

    def _play(self, kind: str, name: str) -> str:
        if self.done or self._env.observation_data is None:
            raise ValueError("The battle is over; no more moves can be played.")
        call = tool_call(kind, name)
        index = self._find(kind, str(name))
        self._calls.append((kind, str(name), index is not None))
        if index is None:
            self.illegal_calls += 1
            options = ", ".join(f"{a.kind}({c!r})" for a, c in self._options())
            error = f"{kind}({name!r}) is not a legal action now. Legal: {options or 'none'}."
            self._refused.append({"call": call, "error": error})
            raise ValueError(error)
        refused, self._refused = self._refused, []
        text, reward, terminated, truncated, info = self._env.step(index, shown=self._shown, raw_output=call,
                                                                    refused=refused)
        self.reward += float(reward)
        self.decisions += 1
        if info["cut"]:  # the horizon: the env forfeited and saved the battle; the reward is the decisions' shaped one
            self.cut = self.done = True
            self._settle_end(self._env.last_end)
            self._shown = f"The rollout's horizon of {self._horizon} decisions is reached; no more moves can be played."
            return self._shown
        if terminated or truncated:
            self.done = True
            self.recording_path = info.get("recording_path") or None
            self.result = info.get("result")
            self._settle_end(self._env.episode_end)
            self._shown = text
            return text
        full = tool_text(text)
        self._shown = changed_text(self._full, full) if self._results == "changes" else full
        self._full = full
        return self._shown

    def _options(self) -> list[tuple[Any, str]]:
        return [(c.action, c.choice) for c in self._env.candidates]

    def _find(self, kind: str, name: str) -> int | None:
        wanted = to_id(name)
        for index, (action, choice) in enumerate(self._options()):
            if action.kind == kind and wanted in (to_id(choice), action.id, to_id(action.name)):
                return index
        return None

    def _settle_end(self, end: Any) -> None:
        if end is None:
            return
        side = self._env.agent_side
        mine = [t.decisions[side] for t in end.recording.turns if side in t.decisions]
        shaped = sum(d.reward.total for d in mine)
        # the recording charges no outcome to a side that forfeits mid-decision; the result still says who won.
        # A horizon cut is not a loss: its reward is the shaped reward of the decisions played.
        outcome = 0.0 if self.cut else outcome_reward(end.recording.result.winner, side)
        components = dict.fromkeys(COMPONENTS, 0.0)
        for decision in mine:
            for name, value in decision.reward.components.items():
                components[name] = round(components.get(name, 0.0) + value, 6)
        self.reward_components = {**components, "shaped": round(shaped, 6), "outcome": outcome}
        self.reward = round(shaped + outcome, 6)
        self.recording_path = str(end.path) if end.path is not None else None
        self.result = end.recording.result.model_dump()


def tool_call(kind: str, argument: Any) -> str:
    """A tool call as the recording keeps it: ``{"name": "move", "arguments": {"name": "surf"}}``."""
    key = "name" if kind == "move" else "pokemon"
    return json.dumps({"name": kind, "arguments": {key: argument}}, ensure_ascii=False, default=str)


def finish(env: ShowdownToolEnv) -> float:
    """End a rollout: forfeit its battle if it is still going (so it is saved) and return the final reward."""
    return env._finish()


TOKEN_METRIC = "showdown/completion_tokens"
"""The mean, over a batch's rollouts, of every token after the prompt (model turns and tool results): what
``max_completion_length`` budgets. Logged through TRL's ``log_metric`` beside its own ``completions/mean_length``."""


def reward_func(environments: list[ShowdownToolEnv], completion_ids: list[list[int]] | None = None,
                log_metric: Any = None, log_extra: Any = None, **kwargs: Any) -> list[float]:
    """GRPO reward: each rollout's battle reward (shaped + outcome), after ending battles the rollout left unfinished.
    With TRL's ``completion_ids``, each env's ``tokens["completion"]`` is its rollout's true length (tool results
    included), logged as ``showdown/completion_tokens`` (and per rollout in the completions table)."""
    rewards = [finish(env) for env in environments]
    if completion_ids is not None:
        counts = [len(ids) for ids in completion_ids]
        for env, count in zip(environments, counts):
            env.tokens["completion"] = count
        if log_metric is not None and counts:
            log_metric(TOKEN_METRIC, sum(counts) / len(counts))
        if log_extra is not None:
            log_extra("completion_tokens", counts)
    return rewards


BUDGET_SEED = 0
CALL_OVERHEAD_TOKENS = 12
"""Per decision, beyond the tool call's JSON and the tool result's text: the chat template's turn markers, at least."""


def decision_tokens(tokenizer: Any, horizon: int | None, **env_options: Any) -> list[int]:
    """The fewest tokens each decision of a sample rollout adds to a completion with ``tokenizer``: the tool call
    (its JSON) and the tool result the env returns, plus ``CALL_OVERHEAD_TOKENS``; played by the first listed option,
    seed ``BUDGET_SEED``, for ``horizon`` decisions (the battle, if None)."""
    env = ShowdownToolEnv(recordings=False, **env_options)
    counts: list[int] = []

    def count(text: str) -> int:
        return len(tokenizer(text, add_special_tokens=False)["input_ids"])

    try:
        env.reset(seed=BUDGET_SEED)
        while not env.done and (horizon is None or len(counts) < horizon):
            action, choice = env._options()[0]
            result = env.move(choice) if action.kind == "move" else env.switch(choice)
            counts.append(count(tool_call(action.kind, choice)) + count(result) + CALL_OVERHEAD_TOKENS)
    finally:
        env._finish()
    return counts


def budgeted_factory(tokenizer: Any, max_completion_length: int, *, horizon: int | None, **env_options: Any):
    """``environment_factory`` for TRL (``functools.partial(ShowdownToolEnv, horizon=…, **env_options)``) once a sample
    rollout of ``horizon`` decisions fits ``max_completion_length`` tokens with ``tokenizer``; else a one-line
    ``InputError`` naming the horizon that fits, before any training. The sample counts only the tool calls and tool
    results (what every rollout must hold): a model that writes more around its calls needs more room still."""
    counts = decision_tokens(tokenizer, horizon, **env_options)
    need = sum(counts)
    if need > max_completion_length:
        fits, total = 0, 0
        for value in counts:
            if total + value > max_completion_length:
                break
            fits, total = fits + 1, total + value
        asked = f"horizon {horizon}" if horizon is not None else "a whole battle (no horizon)"
        per = need // max(1, len(counts))
        advice = f"use horizon={fits}" if fits else "no decision fits"
        raise InputError(f"{asked} does not fit max_completion_length={max_completion_length}: its {len(counts)} "
                         f"decisions take at least {need:,} tokens with this tokenizer (about {per:,} a decision: "
                         f"tool call and tool result; seed {BUDGET_SEED}); {advice}, or max_completion_length of at "
                         f"least {need:,}")
    return functools.partial(ShowdownToolEnv, horizon=horizon, **env_options)


def turn_prompts(tokenizer: Any, prompt: list[dict[str, Any]], completion_ids: list[int], tools: list[Any],
                 **chat_template_kwargs: Any) -> list[str]:
    """The exact text a model was given before each of its turns in a TRL rollout: the chat-templated prompt (as
    TRL renders it: the row's messages with the env's first text, the tools, the generation prompt), then for every
    later turn the completion so far, decoded from the token ids TRL concatenated (its own turns and the tool
    results, special tokens kept) up to that turn's generation prompt."""
    def rendered(generation_prompt: bool) -> str:
        return tokenizer.apply_chat_template(prompt, tools=tools, add_generation_prompt=generation_prompt,
                                             tokenize=False, **chat_template_kwargs)

    head, bare = rendered(True), rendered(False)
    marker = head[len(bare):] if head.startswith(bare) and len(head) > len(bare) else ""
    text = tokenizer.decode(list(completion_ids), skip_special_tokens=False)
    prompts, start = [head], 0
    while marker and (at := text.find(marker, start)) >= 0:
        start = at + len(marker)
        prompts.append(head + text[:start])
    return prompts


def keep_prompts(env: ShowdownToolEnv, prompts: list[str], completion: list[dict[str, Any]]) -> None:
    """Write into the rollout's saved recording, per decision, the chat-templated prompt its tool call answered
    (``policy_info["prompt"]``, as a checkpoint policy's decisions have it). TRL's turns are matched to the env's
    calls in order; a call TRL never handed to the env (an unknown tool, bad arguments) is skipped."""
    if not env.recording_path:
        return
    turns: list[int] = []
    calls = iter(env._calls)
    pending = next(calls, None)
    assistant = [m for m in completion if m.get("role") == "assistant"]
    for turn, message in enumerate(assistant):
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            arguments = function.get("arguments") or {}
            argument = arguments.get("name" if function.get("name") == "move" else "pokemon")
            if pending is not None and (function.get("name"), str(argument)) == pending[:2]:
                if pending[2]:
                    turns.append(turn)
                pending = next(calls, None)
    path = Path(env.recording_path)
    recording = load_recording(path)
    side = env._env.agent_side
    mine = [t.decisions[side] for t in recording.turns if side in t.decisions]
    played = mine[len(mine) - len(turns):] if turns else []  # a branch's replayed decisions come first
    for decision, turn in zip(played, turns):
        if turn < len(prompts):
            decision.policy_info["prompt"] = prompts[turn]
    rewrite_recording(path, recording)  # compressed as the env saved it


def prompt_keeping_reward_func(tokenizer: Any, **chat_template_kwargs: Any):
    """``reward_func`` that also keeps, per decision of each rollout's recording, the exact chat-templated prompt
    the model answered (``policy_info["prompt"]``). Pass the trainer's tokenizer and its ``chat_template_kwargs``."""
    def reward_func_with_prompts(environments: list[ShowdownToolEnv], prompts: list[Any] | None = None,
                                 completions: list[Any] | None = None, completion_ids: list[list[int]] | None = None,
                                 log_metric: Any = None, log_extra: Any = None, **kwargs: Any) -> list[float]:
        rewards = reward_func(environments, completion_ids=completion_ids, log_metric=log_metric, log_extra=log_extra)
        if prompts is not None and completions is not None and completion_ids is not None:
            for env, prompt, completion, ids in zip(environments, prompts, completions, completion_ids):
                texts = turn_prompts(tokenizer, prompt, ids, [env.move, env.switch], **chat_template_kwargs)
                env.tokens["prompt"] = len(tokenizer(texts[0], add_special_tokens=False)["input_ids"])
                keep_prompts(env, texts, completion)
        return rewards

    return reward_func_with_prompts
