#!/usr/bin/env python3
"""Exports a GPT-2-small-shaped model (transformers' GPT2LMHeadModel, 124M parameters, random
seeded weights) to ONNX, for tools/ortbench's GPT-2 rows on a machine with torch.

Runs where torch, transformers, onnx and onnxscript are installed (the GPU machine; no network
needed: the config is built here, nothing is downloaded). The export is the fixtures' one
(tools/fixtures/make_fixtures.py): torch.onnx.export with dynamo, opset 18, dims named batch
and seq, inputs input_ids and attention_mask, output logits; the weights go to a side file
OUT.data when the model is over 2 GB (it is not, at GPT-2 small's sizes).

    python3 tools/ortbench/make_gpt2.py --out /tmp/gpt2s.onnx [--layers 12 --hidden 768 --heads 12]
    python3 tools/ortbench/ortbench.py /tmp/gpt2s.onnx --shapes 1x128,8x128 --threads 16 --check

Without torch, `go run ./tools/ortbench/gpt2gen -out /tmp/gpt2s.onnx` writes a graph of the same
shape by hand (plain ONNX ops, the same computation).
"""

import argparse
import os
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--hidden", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--vocab", type=int, default=50257)
    ap.add_argument("--positions", type=int, default=1024)
    ap.add_argument("--dynamo", choices=["yes", "no", "auto"], default="auto",
                    help="torch.onnx.export with dynamo (yes), TorchScript (no), or dynamo then TorchScript")
    a = ap.parse_args()

    import torch
    import transformers as tf
    from torch.export import Dim

    torch.manual_seed(1234)
    cfg = tf.GPT2Config(vocab_size=a.vocab, n_positions=a.positions, n_embd=a.hidden, n_layer=a.layers,
                        n_head=a.heads, activation_function="gelu_new", use_cache=False)
    cfg._attn_implementation = "eager"
    model = tf.GPT2LMHeadModel(cfg).eval()

    class W(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask):
            return self.m(input_ids=input_ids, attention_mask=attention_mask, use_cache=False, return_dict=True).logits

    w = W(model)
    ids = (torch.arange(2 * 8) * 7 + 3).remainder(a.vocab).reshape(2, 8)
    args = (ids, torch.ones(2, 8, dtype=torch.int64))
    names, outs = ["input_ids", "attention_mask"], ["logits"]
    t = time.time()
    prog = None
    if a.dynamo in ("yes", "auto"):
        try:
            b, s = Dim("batch", min=1, max=64), Dim("seq", min=2, max=a.positions)
            prog = torch.onnx.export(w, args, dynamo=True, dynamic_shapes={n: {0: b, 1: s} for n in names},
                                     opset_version=18, input_names=names, output_names=outs, optimize=True)
        except Exception as e:  # noqa: BLE001
            if a.dynamo == "yes":
                raise
            print(f"dynamo export failed ({type(e).__name__}: {str(e)[:300]}); trying TorchScript", flush=True)
    import onnx
    if prog is not None:
        mp = prog.model_proto
        export = "dynamo"
    else:
        tmp = a.out + ".ts.onnx"
        torch.onnx.export(w, args, tmp, dynamo=False, opset_version=17, input_names=names, output_names=outs,
                          dynamic_axes={n: {0: "batch", 1: "seq"} for n in names + outs})
        mp = onnx.load(tmp)
        os.remove(tmp)
        export = "TorchScript"
    size = sum(t.ByteSize() for t in mp.graph.initializer)
    if size >= 2 << 30:
        onnx.save_model(mp, a.out, save_as_external_data=True, all_tensors_to_one_file=True,
                        location=os.path.basename(a.out) + ".data")
    else:
        onnx.save_model(mp, a.out)
    params = sum(p.numel() for p in model.parameters())
    print(f"{a.out}: GPT-2 with {params / 1e6:.1f}M parameters, {export} export, {len(mp.graph.node)} nodes, "
          f"{time.time() - t:.0f} s", flush=True)


if __name__ == "__main__":
    sys.exit(main())
