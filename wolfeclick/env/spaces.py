"""The env's spaces: what an observation and an action may be, and how text travels through Gymnasium's vector envs.

``AnyText`` is a ``Text`` space that holds any string (a state has spaces, ``%``, ``|``…) and that
``AsyncVectorEnv``'s shared memory can carry (``SharedTexts``, registered with Gymnasium's shared-memory functions
when this module is imported); ``observation_space``/``action_space`` build the spaces each ``observation=`` and
``action=`` kind names. Apart from ``ShowdownEnv`` (``wolfeclick.env.env``) because it is Gymnasium plumbing, not the
battle.
"""

from __future__ import annotations

import multiprocessing
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory

from wolfeclick.env.episode import EnvError
from wolfeclick.game.discrete import ACTION_COUNT
from wolfeclick.game.features import FEATURE_COUNT, GROUP_NAMES

__all__ = ["MAX_OBSERVATION_CHARS", "MAX_ACTION_CHARS", "CodePoints", "AnyText", "SharedTexts", "OBSERVATIONS",
           "ACTIONS", "observation_space", "action_space", "check_kinds"]

MAX_OBSERVATION_CHARS = 100_000
MAX_ACTION_CHARS = 4_096


class CodePoints:
    """Every Unicode code point, as a ``Text`` space's character set and list: index ``i`` is ``chr(i)``.

    Gymnasium flattens a ``Text`` value as one index per character into the space's character list; with the
    default alphanumeric list the first ``#`` of a state was a ``KeyError('#')`` (in ``AsyncVectorEnv``'s shared
    memory, before ``SharedTexts``). With this one every string flattens and round-trips."""

    size = 0x110000

    def __len__(self) -> int:
        return self.size

    def __contains__(self, char: object) -> bool:
        return isinstance(char, str) and len(char) == 1

    def __getitem__(self, index: int) -> str:
        return chr(int(index))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CodePoints)

    def __hash__(self) -> int:
        return hash(CodePoints)


class AnyText(gym.spaces.Text):
    """``gymnasium.spaces.Text`` that holds any string up to ``max_length`` (states have spaces, ``%``, ``|``…), and
    that Gymnasium's shared memory can carry. ``sample()`` still draws from the alphanumeric characters."""

    _code_points = CodePoints()

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    @property
    def character_set(self) -> Any:
        return self._code_points

    @property
    def character_list(self) -> Any:
        return self._code_points

    def character_index(self, char: str) -> np.int32:
        return np.int32(ord(char))

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        if mask is not None or probability is not None:
            raise ValueError("AnyText.sample takes no mask: any string is in the space")
        length = int(self.np_random.integers(self.min_length, min(self.max_length, 64) + 1))
        return "".join(self.np_random.choice(self._char_list, size=length))


class SharedTexts:
    """A batch of text observations living in Gymnasium's shared memory, read when the batch is handed out.

    Gymnasium's own reader for ``Text`` decodes the buffer once, when the vector env is built, so every later batch
    would be that first, empty one; a ``Box`` reader is a live view instead. This is the live view for text: each
    env's row holds the length and then the code points; ``AsyncVectorEnv`` returns ``deepcopy`` of it (its default
    ``copy=True``), which is a tuple of the strings as they are now."""

    def __init__(self, shared: Any, n: int, max_length: int) -> None:
        self.shared, self.n, self.max_length = shared, n, max_length

    def rows(self) -> np.ndarray:
        return np.frombuffer(self.shared.get_obj(), dtype=np.int32).reshape(self.n, self.max_length + 1)

    def decode(self) -> tuple[str, ...]:
        return tuple(row[1:1 + int(row[0])].astype("<u4").tobytes().decode("utf-32-le") for row in self.rows())

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return self.decode()

    def __getitem__(self, index: int) -> str:
        return self.decode()[index]

    def __len__(self) -> int:
        return self.n

    def __iter__(self) -> Any:
        return iter(self.decode())


@create_shared_memory.register(AnyText)
def _create_text_memory(space: AnyText, n: int = 1, ctx: Any = multiprocessing) -> Any:
    return ctx.Array(np.dtype(np.int32).char, n * (space.max_length + 1))


@read_from_shared_memory.register(AnyText)
def _read_text_memory(space: AnyText, shared_memory: Any, n: int = 1) -> SharedTexts:
    return SharedTexts(shared_memory, n, space.max_length)


@write_to_shared_memory.register(AnyText)
def _write_text_memory(space: AnyText, index: int, value: str, shared_memory: Any) -> None:
    codes = np.frombuffer(value.encode("utf-32-le"), dtype="<u4").astype(np.int32)
    row = np.frombuffer(shared_memory.get_obj(), dtype=np.int32)[index * (space.max_length + 1):]
    row[0] = len(codes)
    row[1:1 + len(codes)] = codes


OBSERVATIONS = ("text", "vector", "dict")
"""``observation=``: the prompt text, the ``Box`` of ``wolfeclick.game.features``, or its groups as a ``Dict``."""
ACTIONS = ("text", "discrete")
"""``action=``: the model's text (or an index into ``legal_actions``), or ``Discrete(13)`` over the fixed layout of
``wolfeclick.game.discrete`` with a mask."""


def observation_space(kind: str) -> gym.Space[Any]:
    if kind == "text":
        return AnyText(max_length=MAX_OBSERVATION_CHARS)
    if kind == "vector":
        return gym.spaces.Box(-1.0, 1.0, shape=(FEATURE_COUNT,), dtype=np.float32)
    groups: dict[str, gym.Space[Any]] = {
        name: gym.spaces.Box(-1.0, 1.0, shape=(len(names),), dtype=np.float32) for name, names in GROUP_NAMES.items()}
    groups["action_mask"] = gym.spaces.MultiBinary(ACTION_COUNT)
    return gym.spaces.Dict(groups)


def action_space(kind: str) -> gym.Space[Any]:
    return gym.spaces.Discrete(ACTION_COUNT) if kind == "discrete" else AnyText(max_length=MAX_ACTION_CHARS)


def check_kinds(observation: str, action: str) -> None:
    if observation not in OBSERVATIONS:
        raise EnvError(f"observation must be one of {', '.join(OBSERVATIONS)}, not {observation!r}")
    if action not in ACTIONS:
        raise EnvError(f"action must be one of {', '.join(ACTIONS)}, not {action!r}")
