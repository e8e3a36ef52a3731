"""A tiny Qwen3-architecture checkpoint, built from nothing in well under a second, with no download.

For tests, benchmarks and trying the checkpoint path offline (the real loading and decoding code runs on it):
``build_tiny_checkpoint(root)`` writes

- ``root/``: a 2-layer Qwen3 model (hidden 64) with random weights and a byte-level BPE tokenizer trained on a few
  hundred battle-flavoured strings, with a ChatML chat template (rendering like Qwen3-4B-Instruct-2507's for a
  system + user conversation: no thinking block);
- ``root/adapters/a``: a LoRA adapter (r=4, all seven linear projections) whose config names ``root`` as its base;
- ``root/adapters/b``: another LoRA adapter whose ``base_model_name_or_path`` is null (the base must be named).

``lora_B`` is randomised (peft starts it at zero), so each adapter really changes the model's outputs.
``python -m wolfeclick.llm.tiny /tmp/tiny`` writes one; then
``wolfeclick record --p1 llm:/tmp/tiny --p2 heuristic --seed 1 --out /tmp/x``. Needs the ``llm`` extra.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["CHAT_TEMPLATE", "SPECIAL_TOKENS", "tool_chat_template", "build_tokenizer", "tiny_qwen3_config",
           "build_tiny_checkpoint"]

CHAT_TEMPLATE = (
    "{%- for message in messages -%}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

_MOVES = ["thunderbolt", "icebeam", "earthquake", "surf", "closecombat", "machpunch", "stealthrock", "roost",
          "uturn", "toxic", "psychic", "fireblast", "slackoff", "crunch", "protect", "suckerpunch", "flamethrower",
          "hiddenpowerice", "swordsdance", "stoneedge", "dragonclaw", "willowisp", "airslash", "thunderwave"]
_SPECIES = ["hitmonchan", "garchomp", "rapidash", "palkia", "vigoroth", "sandslash", "dugtrio", "slowking",
            "raticate", "manectric", "togekiss", "hooh", "sharpedo", "azumarill", "nidoqueen", "farfetchd",
            "Pikachu", "Garchomp", "Slowking", "Raticate", "Togekiss", "Ho-Oh"]


def _corpus() -> list[str]:
    lines = [
        "You are a competitive Pokemon battler. Analyse the battle state below and choose exactly one action.",
        "You MUST output ONLY a single JSON object — no explanation, no markdown fences, just the raw JSON.",
        '{"action": "move" | "switch", "choice": "Exact Name of Move or Pokemon"}',
        "## Part A: Active Field\n### Active Self\n- Name: hitmonchan\n- HP: 100.0%\n- Status: Healthy",
        "## Part B: Full Self Roster\n## Part C: Opponent History\n- Revealed item: unknown_item",
        "You must choose exactly one action and output pure JSON with this schema:",
        "Valid options for this state:",
        "- Ability: ironfist\n- Item: leftovers\n- Stat Modifiers: None\n- Speed Range: 220-372",
    ]
    for i, move in enumerate(_MOVES):
        lines.append(json.dumps({"action": "move", "choice": move}))
        lines.append(f"- action: 'move', choice: '{move}'")
        lines.append(f"  Moves: {move}(E90) | {_MOVES[(i + 3) % len(_MOVES)]}(N0)")
    for i, mon in enumerate(_SPECIES):
        lines.append(json.dumps({"action": "switch", "choice": mon}))
        lines.append(f"- action: 'switch', choice: '{mon}'")
        lines.append(f"- {mon} HP:{(i * 7) % 100}% OK Item:leftovers")
        lines.append(f"- {mon} | Last HP: {(i * 13) % 100}.0% | Status: Healthy")
    return lines * 3


def tool_chat_template() -> str:
    """Qwen3-4B-Instruct-2507's own chat template, as TRL ships it: it renders tools, tool calls and tool results
    (TRL's ``environment_factory`` needs that) and a system + user conversation exactly as ``CHAT_TEMPLATE`` does."""
    from trl.chat_template_utils import qwen3_instruct_2507_chat_template

    return qwen3_instruct_2507_chat_template


def build_tokenizer(path: Path, chat_template: str = CHAT_TEMPLATE):
    """A byte-level BPE tokenizer (about 700 tokens) with ChatML special tokens and chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=700, special_tokens=SPECIAL_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    core.train_from_iterator(_corpus(), trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                        chat_template=chat_template)
    tokenizer.save_pretrained(path)
    return tokenizer


def tiny_qwen3_config(tokenizer: Any, max_positions: int = 4096) -> Any:
    """The tiny Qwen3 shape every locally built model here shares (2 layers, hidden size 64), sized to ``tokenizer``."""
    from transformers import Qwen3Config

    return Qwen3Config(
        vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=max_positions,
        tie_word_embeddings=False, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
    )


def build_tiny_checkpoint(root: str | Path, *, seed: int = 0, chat_template: str = CHAT_TEMPLATE) -> Path:
    """Write the tiny base model + tokenizer to ``root`` and two LoRA adapters under ``root/adapters``."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import Qwen3ForCausalLM

    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(root, chat_template)
    torch.manual_seed(seed)
    config = tiny_qwen3_config(tokenizer)
    model = Qwen3ForCausalLM(config).eval()
    with torch.no_grad():  # a livelier random model: spread the next-token distribution
        model.get_input_embeddings().weight.normal_(0.0, 0.2)
        model.get_output_embeddings().weight.normal_(0.0, 0.15)
    model.save_pretrained(root)
    modules = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    for index, (name, base_name) in enumerate((("a", str(root)), ("b", None))):
        torch.manual_seed(seed + 1 + index)
        peft_model = get_peft_model(Qwen3ForCausalLM(config),
                                    LoraConfig(r=4, lora_alpha=8, target_modules=modules, lora_dropout=0.0))
        with torch.no_grad():
            for param_name, param in peft_model.named_parameters():
                if "lora_B" in param_name:
                    param.normal_(0.0, 0.3)
        target = root / "adapters" / name
        peft_model.save_pretrained(str(target))
        config_path = target / "adapter_config.json"
        adapter_config = json.loads(config_path.read_text())
        adapter_config["base_model_name_or_path"] = base_name
        config_path.write_text(json.dumps(adapter_config, indent=2))
    return root


if __name__ == "__main__":
    print(build_tiny_checkpoint(sys.argv[1] if len(sys.argv) > 1 else "tiny-checkpoint"))
