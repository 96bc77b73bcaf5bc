"""GBNF grammars that hold a small local model to one tool call or one answer.

A 135M-parameter model does not follow a tool-calling format on its own, so `LocalModel`
constrains every generation with a grammar built for that turn. The grammar has up to two
branches:

- the tool-call branch: a JSON object `{"name": "<tool>", "arguments": {...}}` naming one
  of the offered tools, its arguments following that tool's parameter schema;
- the answer branch: plain text that does not start with `{` (or, when the request has an
  `output_schema`, a JSON value following it).

The JSON parts are converted by llama.cpp's own JSON-schema converter
(`llama_cpp.llama_grammar.SchemaConverter`, the code behind `LlamaGrammar.from_json_schema`),
which covers `$ref`/`$defs`, enums, optional properties and nested objects. A schema it
cannot convert falls back to "any JSON object": the loop validates arguments anyway.

llama-cpp-python crashes the process (a NULL sampler) on a grammar llama.cpp cannot parse,
so `compile_grammar` has llama.cpp parse the grammar first, and falls back to the loose
grammar (every schema as "any JSON object") when the exact one does not parse.
"""

from __future__ import annotations

import copy
import importlib
import json
from collections.abc import Callable, Sequence
from typing import Any

from hookline.models.base import ToolSpec
from hookline.types import JSONObject

__all__ = ["build_grammar", "compile_grammar"]

_ANSWER_TEXT = r"hookline-answer ::= [^{ \t\r\n] [^\x00]*"
"""Free text, non-empty, not starting with `{` (so it can never be taken for a tool call)."""


def build_grammar(
    tools: Sequence[ToolSpec], *, answer: bool, output_schema: JSONObject | None = None, exact: bool = True
) -> str:
    """Build the GBNF grammar of one turn.

    Args:
        tools: The tools the model may call on this turn (empty: no tool-call branch).
        answer: Whether the model may answer instead.
        output_schema: A JSON schema the answer must follow (else the answer is free text).
        exact: Follow each schema; if False, accept any JSON object wherever one is expected.

    Returns:
        The grammar's text, its start rule named `root`.

    Raises:
        ValueError: neither branch is allowed.

    """
    if not tools and not answer:
        raise ValueError("a grammar needs a tool-call branch, an answer branch, or both")
    converter = _converter()
    branches: list[str] = []
    extra: list[str] = []
    if tools:
        alternatives = [_call_rule(converter, spec, index, exact=exact) for index, spec in enumerate(tools)]
        branches.append("hookline-call")
        extra.append("hookline-call ::= " + " | ".join(alternatives))
    if answer and output_schema is not None:
        branches.append(_visit(converter, output_schema if exact else {}, "answer-json", fallback={}))
    elif answer:
        branches.append("hookline-answer")
        extra.append(_ANSWER_TEXT)
    return "\n".join([f"root ::= {' | '.join(branches)}", converter.format_grammar(), *extra]) + "\n"


def compile_grammar(model: Any, build: Callable[[bool], str]) -> Any:
    """Return a `LlamaGrammar` of `build(True)`, or of `build(False)` if llama.cpp can't parse it.

    Args:
        model: The llama.cpp model pointer (`Llama.model`), whose vocabulary the check uses.
        build: Builds the grammar's text, exact (True) or loose (False).

    Raises:
        ValueError: neither grammar parses.

    """
    llama_cpp = importlib.import_module("llama_cpp")
    vocab = llama_cpp.llama_model_get_vocab(model)
    for exact in (True, False):
        text = build(exact)
        sampler = llama_cpp.llama_sampler_init_grammar(vocab, text.encode(), b"root")
        if sampler:
            llama_cpp.llama_sampler_free(sampler)
            return llama_cpp.LlamaGrammar.from_string(text)
    raise ValueError(f"llama.cpp could not parse the tool-call grammar:\n{text}")


def _converter() -> Any:
    module = importlib.import_module("llama_cpp.llama_grammar")
    return module.SchemaConverter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)


def _call_rule(converter: Any, spec: ToolSpec, index: int, *, exact: bool) -> str:
    """Add the rules of one tool's call object; return the expression that matches it."""
    loose: JSONObject = {"type": "object"}
    arguments = _visit(converter, dict(spec.parameters) if exact else loose, f"tool{index}-args", fallback=loose)
    prefix = _literal('{"name": ' + json.dumps(spec.name) + ', "arguments": ')
    return f'( {prefix} {arguments} "}}" )'


def _visit(converter: Any, schema: JSONObject, rule: str, *, fallback: JSONObject) -> str:
    """Convert `schema` under the rule name `rule`, or `fallback` if the converter can't."""
    try:
        resolved = converter.resolve_refs(copy.deepcopy(schema), rule)
        return str(converter.visit(resolved, rule))
    except (AssertionError, KeyError, ValueError, TypeError, AttributeError):
        return str(converter.visit(fallback, rule))


def _literal(text: str) -> str:
    """`text` as a GBNF string literal."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + "".join(ch if ch >= " " else f"\\x{ord(ch):02x}" for ch in escaped) + '"'
