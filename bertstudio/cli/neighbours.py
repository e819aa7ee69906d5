"""bertstudio neighbours --model SRC --corpus FILE --layer L --token I [--k K] TEXT [--json]
bertstudio neighbours --model SRC --corpus FILE --layer L --sentences [--k K] TEXT [--json]

The K tokens of the corpus file (one sentence or passage per line; special tokens left out) whose
layer-L hidden state has the highest cosine with token I of TEXT (I counts tokens as `bertstudio
attention` prints them, [CLS] included; layer 0 is the embeddings). --sentences compares the
mean-pooled sentence vectors instead. The index is cached in ~/.cache/bertstudio/corpus/.
"""

from __future__ import annotations

import argparse
from typing import Any

from bertstudio.cli.common import print_json, stderr_control
from bertstudio.cli.task_command import clear_progress_line, print_notes


def register(subparsers: Any) -> None:
    """`subparsers` is what ArgumentParser.add_subparsers() returned (argparse has no public name for it)."""
    from bertstudio.core.corpus.index import MAX_CORPUS_LINES
    from bertstudio.core.corpus.query import MAX_K

    parser = subparsers.add_parser(
        "neighbours", help="corpus tokens (or sentences) a model treats most like a token of your text",
        description=__doc__.split("\n", 3)[3], formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--model", required=True, metavar="SRC", help="Hub id or local model folder")
    parser.add_argument("--corpus", required=True, metavar="FILE",
                        help=f"UTF-8 text, one sentence or passage per line (at most {MAX_CORPUS_LINES:,} lines)")
    parser.add_argument("--layer", required=True, metavar="L", help="0 = embeddings, 1..layers = encoder layers")
    parser.add_argument("--token", metavar="I", help="the token of TEXT to search with ([CLS] is 0)")
    parser.add_argument("--sentences", action="store_true", help="search mean-pooled sentences instead of tokens")
    parser.add_argument("--k", default="10", metavar="K", help=f"how many neighbours, 1-{MAX_K} (default 10)")
    parser.add_argument("text", metavar="TEXT", help="the text whose token (or whole) is searched for")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1 or mps (default: cpu)")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON on stdout")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bertstudio.core.corpus.query import (
        check_k,
        encoder_task,
        index_corpus,
        sentence_neighbours,
        text_query,
        token_neighbours,
    )
    from bertstudio.core.errors import InputError
    from bertstudio.core.files import regular_file
    from bertstudio.core.limits import as_int
    from bertstudio.core.models import LoadRequest, load_model

    k = check_k(args.k)
    if args.sentences == (args.token is not None):
        raise InputError("Give --token I (a token of TEXT) or --sentences, one of the two.")
    token = None if args.sentences else as_int(args.token, "--token")
    regular_file(args.corpus, "corpus file")  # before the model is loaded
    control = stderr_control()
    loaded = load_model(LoadRequest(args.model, encoder_task(), args.device), control)
    index, notes = index_corpus(loaded, args.corpus, args.layer, control)
    query, tokens = text_query(loaded, args.text, index.layer, token)
    found = sentence_neighbours(index, query, k) if args.sentences else token_neighbours(index, query, k)
    clear_progress_line()
    print_notes(notes)
    if args.json:
        print_json({"neighbours": [n.to_json() for n in found]})
        return 0
    what = "sentences like the text" if token is None else f"tokens like {tokens[token]!r} (token {token})"
    print(f"{what}, layer {index.layer}, {len(index.lines):,} lines, {index.token_count:,} tokens:")
    for n in found:
        where = f"line {n.line}" + (f", token {n.token_index} {n.token!r}" if n.token_index is not None else "")
        print(f"  {n.score:+.4f}  {where}: {n.context[:100]}")
    return 0
