"""Legal actions come from the request; parsing is tolerant about form and exact about meaning."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from game_helpers import pokemon, request, team

from wolfeclick.game.actions import PARSER_MODES, LegalAction, find_by_command, legal_actions, parse_action

BENCH = ["Snorlax", "Garchomp", "Starmie", "Scizor", "Gengar"]


def names(actions: list[LegalAction], kind: str) -> list[str]:
    return [a.name for a in actions if a.kind == kind]


def test_moves_then_switches_with_slots() -> None:
    actions = legal_actions(request("p1"))
    assert names(actions, "move") == ["Thunderbolt", "Volt Switch", "Surf", "Thunder Wave"]
    assert names(actions, "switch") == BENCH
    assert [a.command() for a in actions] == [f"move {i}" for i in range(1, 5)] + [f"switch {i}" for i in range(2, 7)]
    assert actions[3].id == "thunderwave"


def test_force_switch_has_only_switches() -> None:
    actions = legal_actions(request("p1", force_switch=True))
    assert names(actions, "move") == []
    assert names(actions, "switch") == BENCH


def test_trapped_has_only_moves() -> None:
    actions = legal_actions(request("p1", trapped=True))
    assert names(actions, "switch") == []
    assert len(names(actions, "move")) == 4


def test_disabled_moves_are_left_out_but_keep_their_slot() -> None:
    actions = legal_actions(request("p1", disabled=("voltswitch",)))
    moves = [a for a in actions if a.kind == "move"]
    assert [a.name for a in moves] == ["Thunderbolt", "Surf", "Thunder Wave"]
    assert [a.slot for a in moves] == [1, 3, 4]


def test_fainted_bench_cannot_be_switched_in() -> None:
    mons = team("p1", {"Snorlax": "0 fnt", "Gengar": "0 fnt"})
    assert names(legal_actions(request("p1", mons)), "switch") == ["Garchomp", "Starmie", "Scizor"]


def test_wait_has_no_actions_and_team_preview_offers_each_lead() -> None:
    assert legal_actions(request("p1", wait=True)) == []
    preview = {**request("p1"), "teamPreview": True}
    team = preview["side"]["pokemon"]
    assert [a.command() for a in legal_actions(preview)] == [f"team {i}" for i in range(1, len(team) + 1)]
    assert {a.kind for a in legal_actions(preview)} == {"team"}
    assert legal_actions({}) == []


def test_single_pokemon_left_has_no_switches() -> None:
    mons = [pokemon("p1", "Pikachu", moves=["thunderbolt"], active=True)]
    assert [a.command() for a in legal_actions(request("p1", mons))] == ["move 1"]


LEGAL = legal_actions(request("p1"))


@pytest.mark.parametrize(
    "text",
    [
        '{"action": "move", "choice": "Thunder Wave"}',
        '{"choice": "Thunder Wave", "action": "move"}',
        '{"ACTION": "Move", "Choice": "thunderwave"}',
        '{"action": "move", "choice": "thunder-wave"}',
        'I will paralyse it. {"action": "move", "choice": "THUNDER WAVE"} Done.',
        '<think>maybe {"action": "move", "choice": "Surf"}?</think>\n{"action": "move", "choice": "Thunder Wave"}',
        '```json\n{"action": "move", "choice": "Thunder Wave"}\n```',
    ],
)
def test_parse_action_tolerates_form(text: str) -> None:
    parsed = parse_action(text, LEGAL)
    assert parsed.legal and parsed.reason is None
    assert parsed.action is not None and parsed.action.command() == "move 4"


def test_parse_switch() -> None:
    parsed = parse_action('{"action": "switch", "choice": "garchomp"}', LEGAL)
    assert parsed.action is not None and parsed.action.command() == "switch 3"


def test_unknown_move_is_illegal_with_reason() -> None:
    parsed = parse_action('{"action": "move", "choice": "Hyper Beam"}', LEGAL)
    assert not parsed.legal and parsed.action is None
    assert parsed.reason and "Hyper Beam" in parsed.reason


def test_wrong_kind_is_illegal() -> None:
    assert not parse_action('{"action": "switch", "choice": "Thunderbolt"}', LEGAL).legal
    assert not parse_action('{"action": "move", "choice": "Garchomp"}', LEGAL).legal
    parsed = parse_action('{"action": "attack", "choice": "Thunderbolt"}', LEGAL)
    assert not parsed.legal and parsed.reason and "attack" in parsed.reason


@pytest.mark.parametrize("text", [None, "", "   ", "thunderbolt please", '{"action": "move"}'])
def test_no_action_object(text: str | None) -> None:
    parsed = parse_action(text, LEGAL)
    assert not parsed.legal and parsed.reason


def test_disabled_move_is_not_parseable() -> None:
    legal = legal_actions(request("p1", disabled=("surf",)))
    assert not parse_action('{"action": "move", "choice": "Surf"}', legal).legal


def test_find_by_command() -> None:
    assert find_by_command("move 2", LEGAL) == LEGAL[1]
    assert find_by_command("move thunderbolt terastallize", LEGAL) == LEGAL[0]
    assert find_by_command("/choose switch 3", LEGAL) is not None
    assert find_by_command("pass", LEGAL) is None


# ------------------------------------------------------------------------------------------------ parser modes

DOCS = Path(__file__).resolve().parents[1] / "docs" / "llm.md"

TABLE_LEGAL = [
    LegalAction("move", "Ice Punch", "icepunch", 1),
    LegalAction("move", "U-turn", "uturn", 2),
    LegalAction("move", "Hidden Power Grass 70", "hiddenpower", 3),
    LegalAction("move", "Thunder Wave", "thunderwave", 4),
    LegalAction("switch", "Shaymin-Sky", "shayminsky", 2),
    LegalAction("switch", "Ho-Oh", "hooh", 3),
    LegalAction("switch", "Garchomp", "garchomp", 4),
]
TABLE_LISTED = list(zip(TABLE_LEGAL, ["icepunch", "uturn", "hiddenpowergrass", "thunderwave", "shayminsky", "hooh",
                                      "garchomp"]))


def parser_table() -> list[tuple[str, str, str]]:
    """The rows of the parser table in docs/llm.md: (model output, tolerant, reference)."""
    text = DOCS.read_text()
    body = text[text.index("<!-- parser-table:start -->"):text.index("<!-- parser-table:end -->")]
    rows = []
    for line in body.splitlines()[3:]:
        match = re.match(r"^\| `(.*)` \| (\S+) \| (\S+) \| .* \|$", line)
        assert match, f"malformed parser-table row: {line}"
        rows.append((match.group(1).replace("\\n", "\n"), match.group(2), match.group(3)))
    return rows


def test_the_parser_table_is_there() -> None:
    rows = parser_table()
    assert len(rows) >= 25
    assert any(t != r for _, t, r in rows) and any(t == r for _, t, r in rows)


@pytest.mark.parametrize("text,tolerant,reference", parser_table(), ids=lambda v: v[:40] if isinstance(v, str) else v)
def test_parser_table_row(text: str, tolerant: str, reference: str) -> None:
    shown = dict(TABLE_LISTED)
    for mode, want in (("tolerant", tolerant), ("reference", reference)):
        parsed = parse_action(text, TABLE_LEGAL, mode=mode, listed=TABLE_LISTED)
        got = shown[parsed.action] if parsed.action is not None else "rejected"
        assert got == want, f"{mode}: {got} (reason: {parsed.reason})"
        assert (parsed.reason is None) == parsed.legal


@pytest.mark.parametrize("fenced", ['```json\n{"action": "move", "choice": "icepunch"}\n```',
                                    '```\n{"action": "move", "choice": "icepunch"}\n```'])
def test_both_parsers_read_a_fenced_answer(fenced: str) -> None:
    for mode in PARSER_MODES:
        assert parse_action(fenced, TABLE_LEGAL, mode=mode, listed=TABLE_LISTED).action == TABLE_LEGAL[0]


def test_reference_parser_reasons_are_one_line() -> None:
    for text in ["", "no json", '{"action": "Move", "choice": "icepunch"}', '{"action": "move", "choice": "x"}']:
        parsed = parse_action(text, TABLE_LEGAL, mode="reference", listed=TABLE_LISTED)
        assert not parsed.legal and parsed.reason and "\n" not in parsed.reason


def test_reference_parser_matches_only_listed_options() -> None:
    # without ``listed`` both parsers fall back to the simulator names
    assert parse_action('{"action": "move", "choice": "icepunch"}', TABLE_LEGAL, mode="reference").action is None
    assert parse_action('{"action": "move", "choice": "ice punch"}', TABLE_LEGAL, mode="reference").legal
    only_moves = TABLE_LISTED[:4]
    parsed = parse_action('{"action": "switch", "choice": "garchomp"}', TABLE_LEGAL, mode="reference", listed=only_moves)
    assert not parsed.legal


def test_unknown_parser_mode_is_a_bug() -> None:
    with pytest.raises(ValueError, match="unknown parser mode"):
        parse_action('{"action": "move", "choice": "icepunch"}', TABLE_LEGAL, mode="lenient")


@pytest.mark.parametrize("name,typed", [("Hidden Power Grass 70", "hiddenpowergrass"),
                                        ("Hidden Power Fire", "hiddenpowerfire")])
def test_hidden_power_answers_by_its_typed_id(name: str, typed: str) -> None:
    legal = [LegalAction("move", name, "hiddenpower", 1), LegalAction("move", "Surf", "surf", 2)]
    for answer in (typed, "hiddenpower", name):
        parsed = parse_action(f'{{"action": "move", "choice": "{answer}"}}', legal)
        assert parsed.action == legal[0], answer
