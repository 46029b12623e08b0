#!/usr/bin/env python3
"""PyTorch eager's peak memory beyond the weights for every zoo family at (batch, seq), on the
GPU: the figure carve's arena is compared with (tools/zoo's seq-linearity criterion is the
other). Same configs as make_zoo.py, fp32, transformers' default attention (sdpa where the
family has it), attention_mask of ones, logits of every position (the forward's default).

Usage (GPU host): python3 tools/zoo/torch_peak.py [--batch 8 --seq 2048] [--only fam1,fam2] > peaks.json
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_zoo import families  # noqa: E402


def main():
    import torch

    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--only", default="", help="comma-separated families (default: all)")
    a = ap.parse_args()
    out = {}
    for fam, (task, build) in sorted(families().items()):
        if a.only and fam not in a.only.split(","):
            continue
        try:
            torch.manual_seed(1234)
            m = build().eval().cuda()
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
            ids = torch.full((a.batch, a.seq), 5, dtype=torch.long, device="cuda")
            am = torch.ones_like(ids)
            with torch.no_grad():
                kw = dict(input_ids=ids, attention_mask=am)
                if task == "decoder":
                    kw["use_cache"] = False
                m(**kw)
            torch.cuda.synchronize()
            peak = torch.cuda.max_memory_allocated() - base
            out[fam] = {"peak_extra_bytes": int(peak), "attn": m.config._attn_implementation}
            print(f"{fam:18s} {peak / 2**20:9.1f} MiB  {m.config._attn_implementation}", file=sys.stderr, flush=True)
            del m
            torch.cuda.empty_cache()
        except Exception as e:  # noqa: BLE001
            out[fam] = {"error": f"{type(e).__name__}: {e}"[:300]}
            print(f"{fam:18s} error {e}"[:200], file=sys.stderr, flush=True)
    json.dump(out, sys.stdout, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
