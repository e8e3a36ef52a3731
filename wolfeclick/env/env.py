"""``ShowdownEnv``: a Gymnasium env where one agent battles a chosen opponent on the embedded simulator.

- The observation is the text the agent reads: by default the ``wolfeclick-v1`` user message (what the published
  checkpoints were trained on), or another prompt profile's.
- The action is the model's raw text, read with the same tolerant parser as generate mode, or an index into
  ``info["legal_actions"]`` (the exact answer strings). An answer that names no legal action is played as the
  seeded fallback and charged −10, flagged in ``info`` and in the recording.
- For RL libraries that want numbers: ``observation="vector"`` (a ``Box`` of ``wolfeclick.game.features``) or
  ``"dict"`` (its groups and the mask), and ``action="discrete"`` (``Discrete(13)``, ``wolfeclick.game.discrete``)
  with ``action_masks()``; a masked-out action is refused like illegal text.
- Rewards are the runner's own: a decision's shaped reward is known once every side that decided with it has
  decided again (or the battle ended), so a step's reward is the sum over the agent's decisions settled during that
  step — almost always just the last one; after the agent's own forced switch it arrives one step later.
  The outcome (±10) comes on the final step and is reported apart in ``info["reward"]``.
- ``horizon=H`` cuts an episode after H decisions (Gymnasium's truncation): the battle is forfeited and saved, the
  last step's reward adds the shaped reward of the decisions the cut settled, with no outcome (a cut is not a
  loss), and the observation returned is the state at the cut, to bootstrap a value from.
- Every episode is a normal recording (``source.kind = "training"``), saved when it ends (gzip-compressed by
  default: see ``ShowdownEnv``).
"""

from __future__ import annotations

import os
import weakref
from pathlib import Path
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.runner import DEFAULT_FORMAT, DEFAULT_MAX_TURNS
from wolfeclick.battle.schema import Recording, TurnRecord
from wolfeclick.battle.store import load_recording
from wolfeclick.battle.teams import TeamSources
from wolfeclick.battle.tracker import generation
from wolfeclick.env.episode import AGENT_SPEC, STEP_TIMEOUT_S, EnvError, Episode, EpisodeEnd
from wolfeclick.env.service import SimService, default_service
from wolfeclick.env.spaces import action_space, check_kinds, observation_space
from wolfeclick.game.actions import parse_action
from wolfeclick.game.discrete import ACTION_COUNT, ACTION_NAMES, action_mask, resolve
from wolfeclick.game.features import empty_groups, feature_groups
from wolfeclick.game.prompts import Candidate, Prompt, make_profile
from wolfeclick.game.reward import COMPONENTS
from wolfeclick.paths import recordings_dir as default_recordings_dir
from wolfeclick.policies.base import Decision, Observation, Policy, fallback_decision
from wolfeclick.sides import Side, is_side

DEFAULT_PROMPT = "wolfeclick-v1"
SEED_LIMIT = 2**31 - 1
START_ATTEMPTS = 3
"""How often ``reset`` starts its battle again when the simulator dies before the agent's first decision."""
EMPTY_RESULT: dict[str, Any] = {"winner": "", "reason": "", "turns": 0, "error": ""}
"""``info["result"]`` before the battle ends (after it: the recording's result, ``""`` for a missing winner)."""


class NumericSpaces(gym.Wrapper):
    """A ``ShowdownEnv`` made with a text observation or a text action (``gymnasium.make``'s default), as
    Stable-Baselines3 needs it: SB3 has no ``Text`` space, so its ``check_env`` and its algorithms refuse those
    four combinations. Wrapped, the env observes ``observation`` (``"vector"``: the ``Box`` of features, or
    ``"dict"``) and acts through ``Discrete(13)`` with ``action_masks()`` for MaskablePPO: exactly the env built
    with ``observation=…, action="discrete"`` (same features, rewards, recordings). Wrapping forfeits a battle in
    progress, as ``reset`` does."""

    def __init__(self, env: gym.Env, observation: str = "vector") -> None:
        if observation not in ("vector", "dict"):
            raise EnvError(f"NumericSpaces observes 'vector' or 'dict', not {observation!r}")
        base = env.unwrapped
        if not isinstance(base, ShowdownEnv):
            raise EnvError(f"NumericSpaces wraps a ShowdownEnv, not {type(base).__name__}")
        base.use_spaces(observation, "discrete")
        self.base = base
        super().__init__(env)  # Gymnasium's wrappers read the spaces from the env they wrap, now the numeric ones

    def action_masks(self) -> np.ndarray:
        return self.base.action_masks()


def recordings_dir(value: str | os.PathLike[str] | None | bool) -> Path | None:
    """Where episodes are saved: the argument, else ``$WOLFECLICK_RECORDINGS``, else ``recordings``; False: nowhere."""
    if value is False:
        return None
    if value is None or value is True:
        return default_recordings_dir()
    return Path(value)


class ShowdownEnv(gym.Env):
    """A single-agent Showdown battle against ``opponent`` (any policy spec, or a ``Policy``).

    Also ``gymnasium.make("wolfeclick.env:WolfeClick/Showdown-v0", **the same keyword arguments)``.
    Recordings, the default for training runs: every episode is saved when it ends to ``recordings`` (default
    ``$WOLFECLICK_RECORDINGS``, else ``./recordings``), gzip-compressed (``compress_recordings=True``: ~30 KB a gen9
    random battle instead of ~0.5-1 MB of JSON, still ``<id>.json``, read as it is by every reader of recordings);
    ``compress_recordings=False`` writes plain JSON, ``recordings=False`` saves nothing.
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, opponent: str | Policy = "random", *, format: str = DEFAULT_FORMAT, prompt: str = DEFAULT_PROMPT,
                 max_turns: int = DEFAULT_MAX_TURNS, agent_side: str = "p1",
                 recordings: str | os.PathLike[str] | None | bool = None, service: SimService | None = None,
                 render_mode: str | None = None, step_timeout_s: float = STEP_TIMEOUT_S,
                 agent_spec: str = AGENT_SPEC, teams: TeamSources | None = None, horizon: int | None = None,
                 observation: str = "text", action: str = "text", compress_recordings: bool = True,
                 **llm_options: Any) -> None:
        if not is_side(agent_side):
            raise EnvError(f"agent_side must be 'p1' or 'p2', not {agent_side!r}")
        check_kinds(observation, action)
        generation(format)  # an unknown format fails here, in one line
        self.format = format
        self.opponent = make_policy(opponent, **llm_options) if isinstance(opponent, str) else opponent
        self.profile = make_profile(prompt)
        self.max_turns = max_turns
        self.horizon = check_horizon(horizon)
        """Cut each episode after this many agent decisions (None: play the battle out)."""
        self.agent_side: Side = agent_side
        self.recordings = recordings_dir(recordings)
        self.compress_recordings = compress_recordings
        """Save episodes gzip-compressed (the default: ~30x smaller, read by every reader of recordings as they are)."""
        self.service = service or default_service()
        self.render_mode = render_mode
        self.step_timeout_s = step_timeout_s
        self.agent_spec = agent_spec
        self.teams = teams
        """For formats that play given teams: ``TeamSources(team1=…, team2=…, pool=…)`` (files in Showdown's export
        or packed format), validated by the simulator at each reset and dealt from the battle seed."""
        self.observation_kind = observation
        self.action_kind = action
        self.observation_space = observation_space(observation)
        self.action_space = action_space(action)
        self._episode: Episode | None = None
        self._observation: Observation | None = None
        self._prompt: Prompt | None = None
        self._played_candidates: list[Candidate] = []
        self._text = ""
        self._groups = empty_groups()
        self._mask = np.ones(ACTION_COUNT, dtype=np.int8)
        self.last_cut = False
        """Whether the last episode was cut at the horizon (its last step returned ``truncated`` and ``info["cut"]``)."""
        self._reported: set[int] = set()
        """Decision indices whose rewards a step has already returned (a cut adds the rest)."""
        self._finalizer: weakref.finalize | None = None
        self.battle_seed: int | None = None
        self.last_end: EpisodeEnd | None = None
        """The recording (and where it was saved) of the last episode that ended by ``reset`` or ``close``."""
        self.steps = 0

    # --- Gymnasium ---------------------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Start a new battle (forfeiting one still in progress). ``seed`` is the battle seed itself.

        Without a seed the battle seed is drawn from the env's generator (seeded by the first ``reset(seed=…)``).
        ``options`` may set ``opponent`` (a spec), ``format``, ``max_turns``, ``horizon`` and ``teams`` (``TeamSources``) for
        this and later episodes, and ``recording`` (a path or ``Recording``) with ``at`` (a decision index) to start
        this episode from decision ``at`` of that recording: its choices are replayed up to there (by the branch
        machinery, which refuses a recording that does not replay), then the agent and the opponent play on; the
        first observation is the agent's first decision from ``at`` on.
        """
        super().reset(seed=seed)
        self._end_episode()
        options = dict(options or {})
        if "format" in options:
            generation(str(options["format"]))
            self.format = str(options["format"])
        if "opponent" in options:
            spec = options["opponent"]
            self.opponent = make_policy(spec) if isinstance(spec, str) else spec
        if "max_turns" in options:
            self.max_turns = int(options["max_turns"])
        if "teams" in options:
            self.teams = options["teams"]
        if "horizon" in options:
            self.horizon = check_horizon(options["horizon"])
        start = None
        if options.get("recording") is not None:  # start from decision k of a recording (format and seed are its)
            parent = options["recording"]
            parent = parent if isinstance(parent, Recording) else load_recording(Path(parent))
            start = (parent, int(options.get("at", 0)))
            seed = parent.seed if parent.seed is not None else seed
            self.format = parent.format
        battle_seed = int(seed) if seed is not None else int(self.np_random.integers(0, SEED_LIMIT))
        if battle_seed < 0:
            raise EnvError(f"seed must be non-negative, not {battle_seed}")
        self.battle_seed = battle_seed
        self.steps = 0
        self._reported = set()
        self.last_cut = False
        detail = f"wolfeclick.env vs {self.opponent.spec}"
        for attempt in range(START_ATTEMPTS):
            episode = Episode(self.service, self.opponent, agent_side=self.agent_side, format_id=self.format,
                              seed=battle_seed, max_turns=self.max_turns, recordings=self.recordings,
                              source_detail=detail, agent_spec=self.agent_spec, teams=self.teams, start=start,
                              compress=self.compress_recordings)
            self._episode = episode
            self._finalizer = weakref.finalize(self, Episode.abandon, episode)
            records, observation = episode.wait(self.step_timeout_s)
            lost = observation is None and episode.end is not None and episode.end.recording.result.reason == "aborted"
            if not lost or attempt == START_ATTEMPTS - 1:
                break
            self._end_episode()  # the simulator died before the first decision: start the battle on a fresh one
        if observation is None:  # the battle ended before the agent was asked anything (it never does in practice)
            self._set_observation(None)
            return self._obs(), self._info(records, terminal=True)
        self._set_observation(observation)
        return self._obs(), self._info(records)

    def step(self, action: str | int | np.integer, *, shown: str | None = None, raw_output: str | None = None,
             refused: list[dict[str, str]] | None = None) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        """One decision. The recording keeps, in the decision's ``policy_info``, the exact ``observation`` text the
        agent read (``shown`` when a wrapper showed more than the observation, as the tool env does) and any
        ``refused_calls`` made before this one; ``raw_output`` is the agent's own text (or its tool call)."""
        episode, observation = self._episode, self._observation
        if episode is None and self.last_cut:
            raise EnvError(f"the episode was cut at its horizon of {self.horizon} decisions: call reset() to start "
                           "another")
        if episode is None:
            raise EnvError("no battle in progress: call reset() first")
        if observation is None:
            raise EnvError("the battle is over: call reset() to start another")
        decision = self.decide(action)
        decision.info = {**decision.info, "observation": self._text if shown is None else shown,
                         **({"refused_calls": list(refused)} if refused else {})}
        if raw_output is not None:
            decision.raw_output = raw_output
        self._played_candidates = self._prompt.candidates if self._prompt is not None else []
        self.steps += 1
        episode.answer(decision)
        try:
            records, next_observation = episode.wait(self.step_timeout_s)
        except EnvError as exc:  # the simulator is wedged: this episode ends here, the next reset starts afresh
            return self._lost(decision, str(exc))
        self._set_observation(next_observation)
        refusal = self._refusal(decision, records, next_observation)
        if refusal[0] and not refusal[1]:
            self.steps -= 1  # not a decision: the same one is asked again, so the horizon does not count it
        if next_observation is not None and self.horizon is not None and self.steps >= self.horizon:
            return self._cut(records, decision)
        info = self._info(records, terminal=next_observation is None, decision=decision)
        info["refused_action"], info["played_instead"] = refusal
        reward = info["reward"]["shaped"] + info["reward"]["outcome"]
        terminated = truncated = False
        if next_observation is None:
            assert episode.end is not None
            result = episode.end.recording.result
            # a simulator that died (killed, crashed) ends only this episode, as a truncation with the error in
            # info: a vector env's other battles and the training loop go on; the next reset gets a fresh simulator
            truncated = result.reason in ("turn_limit", "aborted")
            terminated = not truncated
        return self._obs(), float(reward), terminated, truncated, info

    def _cut(self, records: list[TurnRecord], decision: Decision) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """The horizon is reached: forfeit and save the battle; this step's reward is every agent decision not yet
        rewarded (the forfeit settles the last one), without an outcome; the observation is the state at the cut."""
        text, legal, turn = self._text, self.legal_actions, self._observation.turn if self._observation else 0
        groups, mask = self._groups, self._mask
        self._end_episode()
        self.last_cut = True
        end = self.last_end
        assert end is not None
        seen = {record.index for record in records}
        rest = [t for t in end.recording.turns if self.agent_side in t.decisions and t.index not in self._reported
                and t.index not in seen]
        info = self._info(records + rest, end=end, decision=decision, outcome=False)
        info.update(legal_actions=legal, turn=turn, cut=True, action_mask=mask.copy())
        self._text, self._groups, self._mask = text, groups, mask
        return self._obs(), float(info["reward"]["shaped"]), False, True, info

    def _refusal(self, decision: Decision, records: list[TurnRecord],
                 observation: Observation | None) -> tuple[str, str]:
        """(the answer the simulator refused in this step, what the agent's seat sent instead: ``""`` when the agent
        is asked the same decision again, with the refused action masked out), or ``("", "")``."""
        command = decision.choice()
        if observation is not None and command in observation.rejected:
            return self._answer_text(decision) or command, ""
        for record in records:
            mine = record.decisions.get(self.agent_side)
            if mine is not None and command in mine.rejected:  # nothing listed was left: the seat sent the default
                return self._answer_text(decision) or command, mine.command
        return "", ""

    def _lost(self, decision: Decision, error: str) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """The battle was lost to the simulator mid-step (it stopped answering): end the episode as a truncation
        with ``error`` in ``info``; its recording is saved as far as it got."""
        self._end_episode()
        end = self.last_end
        self._text = end_text(end.recording, self.agent_side) if end is not None else f"The battle is over: {error}"
        info = self._info([], end=end, decision=decision, outcome=False)
        info["error"] = error
        return self._obs(), 0.0, False, True, info

    def render(self) -> str | None:
        return self._text if self.render_mode == "ansi" else None

    def close(self, *, shown: str | None = None, refused: list[dict[str, str]] | None = None) -> None:
        """Forfeit a battle still in progress (its recording is saved, with the decision left open under the
        agent's ``players.*.metadata["open_decision"]``: what it read, ``shown``, and any ``refused`` calls) and free
        its simulator slot."""
        self._end_episode(shown=shown, refused=refused)
        super().close()

    def use_spaces(self, observation: str, action: str) -> None:
        """Change the observation and action kinds (``NumericSpaces`` does); a battle in progress is forfeited and
        saved first, as ``reset`` does (the next call is a ``reset``)."""
        check_kinds(observation, action)
        self._end_episode()
        self.observation_kind, self.action_kind = observation, action
        self.observation_space, self.action_space = observation_space(observation), action_space(action)

    # --- actions -----------------------------------------------------------------------------------------------
    def decide(self, action: str | int | np.integer) -> Decision:
        """The decision an action stands for: a legal action, or the flagged seeded fallback."""
        assert self._observation is not None and self._prompt is not None
        observation, candidates = self._observation, self._prompt.candidates
        if isinstance(action, (bool, np.bool_)):
            raise TypeError("an action is the model's text or an index into info['legal_actions'], not a bool")
        if isinstance(action, np.ndarray) and action.shape == ():  # what a vector env hands one env of a batch
            action = action.item()
        if self.action_kind == "discrete":
            if not isinstance(action, (int, np.integer)) or isinstance(action, (bool, np.bool_)):
                raise TypeError(f"a discrete action is an index into the {ACTION_COUNT} slots, "
                                f"not {type(action).__name__}")
            index = int(action)
            resolved = resolve(index, observation.request, observation.allowed())
            if resolved is None:
                name = ACTION_NAMES[index] if 0 <= index < ACTION_COUNT else "out of range"
                return fallback_decision(observation, f"action {index} ({name}) is masked out: not legal now")
            legal, command = resolved
            return Decision(action=legal, command=command if command != legal.command() else None,
                            info={"env_action": index})
        if isinstance(action, (int, np.integer)):
            index = int(action)
            if 0 <= index < len(candidates):
                return Decision(action=candidates[index].action, info={"env_action": index})
            return fallback_decision(observation, f"index {index} is not in 0..{len(candidates) - 1}")
        if not isinstance(action, str):
            raise TypeError(f"an action is the model's text or an index into info['legal_actions'], "
                            f"not {type(action).__name__}")
        stripped = action.strip()
        for candidate in candidates:  # the exact answer string (what a scored model emits)
            if stripped == candidate.text:
                return Decision(action=candidate.action, raw_output=action)
        parsed = parse_action(action, list(observation.legal_actions))
        if parsed.legal:
            return Decision(action=parsed.action, raw_output=action)
        return fallback_decision(observation, parsed.reason or "no legal action named", raw_output=action)

    def action_masks(self) -> np.ndarray:
        """Which of the ``Discrete(13)`` actions are legal now (sb3-contrib's ``MaskablePPO`` calls this). Once the
        battle is over every action is allowed: the next call is a reset, which ignores it."""
        return self._mask.astype(bool)

    # --- what the agent sees -----------------------------------------------------------------------------------
    def _obs(self) -> Any:
        """The observation in this env's ``observation`` kind."""
        if self.observation_kind == "text":
            return self._text
        if self.observation_kind == "vector":
            return np.concatenate(list(self._groups.values()))
        return {**{name: values.copy() for name, values in self._groups.items()}, "action_mask": self._mask.copy()}

    @property
    def legal_actions(self) -> list[str]:
        """The exact answer strings for the current decision (empty once the battle is over)."""
        return [c.text for c in self._prompt.candidates] if self._prompt is not None else []

    @property
    def candidates(self) -> list[Candidate]:
        """The current legal actions with their answer strings (``legal_actions[i]`` is ``candidates[i].text``)."""
        return list(self._prompt.candidates) if self._prompt is not None else []

    @property
    def episode_end(self) -> EpisodeEnd | None:
        """The current episode's recording (and where it was saved) once it has ended by itself, else None."""
        return self._episode.end if self._episode is not None else None

    @property
    def observation_data(self) -> Observation | None:
        """The runner's observation of the current decision (the side's poke-env ``Battle`` included)."""
        return self._observation

    def _set_observation(self, observation: Observation | None) -> None:
        self._observation = observation
        if observation is None:
            self._prompt = None
            end = self._episode.end if self._episode is not None else None
            self._text = end_text(end.recording, self.agent_side) if end is not None else ""
            self._groups, self._mask = empty_groups(), np.ones(ACTION_COUNT, dtype=np.int8)
            return
        self._prompt = self.profile.build(observation)
        self._text = self._prompt.messages[-1]["content"]
        allowed = observation.allowed()
        self._mask = action_mask(observation.request, allowed)
        if self.observation_kind != "text":
            self._groups = feature_groups(observation.battle, observation.request, allowed)

    def _info(self, records: list[TurnRecord], *, terminal: bool = False, decision: Decision | None = None,
              end: EpisodeEnd | None = None, outcome: bool = True) -> dict[str, Any]:
        """The same keys with the same types on every ``reset`` and ``step`` (Gymnasium's vector envs stack them):
        ``""`` where there is no text yet, zeros for components that did not fire, a ``result`` with empty fields
        until the battle ends."""
        side = self.agent_side
        shaped, won, settled = 0.0, 0.0, []
        components = dict.fromkeys(COMPONENTS, 0.0)
        for record in records:
            mine = record.decisions.get(side)
            if mine is None:
                continue
            settled.append(record.index)
            self._reported.add(record.index)
            shaped += mine.reward.total
            won += mine.reward.outcome if outcome else 0.0
            for name, value in mine.reward.components.items():
                components[name] = round(components.get(name, 0.0) + value, 6)
        observation = self._observation
        if end is None and terminal and self._episode is not None:
            end = self._episode.end
        result = dict(EMPTY_RESULT)
        if end is not None:
            result.update({key: value if value is not None else EMPTY_RESULT[key]
                           for key, value in end.recording.result.model_dump().items() if key in EMPTY_RESULT})
        return {
            "legal_actions": self.legal_actions,
            "turn": observation.turn if observation is not None else (
                self._episode.end.recording.result.turns if self._episode and self._episode.end else 0),
            "reward": {"shaped": round(shaped, 6) + 0.0, "outcome": float(won), "components": components},
            "settled_decisions": settled,
            "battle_seed": int(self.battle_seed or 0),
            "illegal": bool(decision.illegal) if decision is not None else False,
            "illegal_reason": (decision.illegal_reason or "") if decision is not None else "",
            "action": (self._answer_text(decision) or "") if decision is not None else "",
            "done": end is not None,
            "recording_path": str(end.path) if end is not None and end.path is not None else "",
            "recording_id": end.recording.id if end is not None else "",
            "result": result,
            "cut": False,
            "error": result["error"] if result["reason"] == "aborted" else "",
            "refused_action": "",
            "played_instead": "",
            "action_mask": self._mask.copy(),
        }

    def _answer_text(self, decision: Decision) -> str | None:
        """The answer string of the action played (as listed in ``legal_actions`` when it was chosen)."""
        for candidate in self._played_candidates:
            if candidate.action == decision.action:
                return candidate.text
        return decision.action.json_text() if decision.action is not None else None

    def _end_episode(self, *, shown: str | None = None, refused: list[dict[str, str]] | None = None) -> None:
        episode, self._episode = self._episode, None
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        if episode is not None and episode.end is None and self._observation is not None:
            episode.open_decision = {"observation": self._text if shown is None else shown,
                                     **({"refused_calls": list(refused)} if refused else {})}
        self._observation = self._prompt = None
        self._groups, self._mask = empty_groups(), np.ones(ACTION_COUNT, dtype=np.int8)
        if episode is not None:
            self.last_end = episode.finish(self.step_timeout_s)


def check_horizon(horizon: Any) -> int | None:
    """A horizon is a positive number of decisions, or None."""
    if horizon is None:
        return None
    if isinstance(horizon, bool) or not isinstance(horizon, (int, np.integer)) or horizon < 1:
        raise EnvError(f"horizon must be a positive number of decisions or None, not {horizon!r}")
    return int(horizon)


def end_text(recording: Any, side: str) -> str:
    """What the agent reads when the battle is over."""
    result = recording.result
    if result.reason == "turn_limit":
        verdict = f"stopped at the turn limit (turn {result.turns})"
    elif result.winner is None:
        verdict = "a tie" if result.reason == "tie" else f"ended ({result.reason})"
    else:
        verdict = "won" if result.winner == side else "lost"
        verdict = f"{verdict} on turn {result.turns}" + (" by forfeit" if result.reason == "forfeit" else "")
    return f"The battle is over: you {verdict}." if result.winner is not None else f"The battle is over: {verdict}."
