#!/usr/bin/env python3
"""Builds the zoo's vision and audio models: tiny random-weight models of the families users run
(torchvision, timm and transformers classes, configs made here, nothing downloaded), exported by
torch.onnx.export's default (dynamo) exporter and by the TorchScript exporter, with onnxruntime
CPU references at two batch sizes. Same manifest as make_zoo.py's (task "vision" or "audio";
the only named dim is batch; the image or spectrogram size is fixed, as these models are
exported), so import_zoo.py merges it:

    PYTHONUNBUFFERED=1 python3 tools/zoo/make_zoo_vision.py --out DIR [--only fam1,fam2]
    (here)  python3 tools/zoo/import_zoo.py --add DIR/zoo_vision.tgz

Families: ResNet (torchvision resnet18 at half width), MobileNetV3 (torchvision, small, width
0.25), EfficientNet (torchvision b0 blocks, width 0.25), ConvNeXt (timm, tiny dims), DeiT and
Swin (timm, tiny dims), ViT (transformers ViTModel and torchvision's VisionTransformer), the
Whisper encoder (transformers), a VAE-decoder block (GroupNorm, nearest Upsample, Conv,
ConvTranspose) and a 1-D conv stack (an audio front end: Conv1d, BatchNorm1d, ReLU, MaxPool1d).
"""

import argparse
import json
import os
import shutil
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
import zoo_run  # noqa: E402
from make_fixtures import describe, inline_functions, strip, versions  # noqa: E402
from zoo_run import log  # noqa: E402
BATCHES = (1, 2)  # the references' batch sizes
EXAMPLE_BATCH = 2


def families():
    """name -> (task, builder, input name, per-sample input shape, output name). A builder
    returns (module, config dict saved beside the model)."""
    import torch

    F = {}

    def tv(ctor, **kw):
        def b():
            import torchvision.models as tvm
            m = getattr(tvm, ctor)(weights=None, **kw)
            return m, {"library": "torchvision", "class": ctor, **{k: str(v) for k, v in kw.items()}}
        return b

    def resnet():
        # torchvision's own blocks at small widths (resnet18's are 64 to 512 channels, 45 MB):
        # a 7x7 stem, BatchNorm, MaxPool, BasicBlocks with a strided downsample, a Bottleneck,
        # global average pooling and the classifier, as ResNet composes them.
        from torchvision.models.resnet import BasicBlock, Bottleneck, conv1x1

        class R(torch.nn.Module):
            def __init__(self):
                super().__init__()
                nn = torch.nn
                self.stem = nn.Sequential(nn.Conv2d(3, 16, 7, 2, 3, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
                                          nn.MaxPool2d(3, 2, 1))
                self.layer1 = BasicBlock(16, 16)
                self.layer2 = BasicBlock(16, 32, stride=2, downsample=nn.Sequential(conv1x1(16, 32, 2), nn.BatchNorm2d(32)))
                self.layer3 = Bottleneck(32, 8)
                self.pool = nn.AdaptiveAvgPool2d((1, 1))
                self.fc = nn.Linear(32, 10)

            def forward(self, pixel_values):
                h = self.layer3(self.layer2(self.layer1(self.stem(pixel_values))))
                return self.fc(torch.flatten(self.pool(h), 1))
        return R(), {"library": "torchvision", "blocks": "BasicBlock x2 (16, 32 channels), Bottleneck (32)"}
    F["resnet"] = ("vision", resnet, "pixel_values", (3, 32, 32), "logits")
    F["mobilenet_v3"] = ("vision", tv("mobilenet_v3_small", num_classes=10, width_mult=0.25), "pixel_values", (3, 32, 32), "logits")

    def efficientnet():
        from torchvision.models.efficientnet import EfficientNet, _efficientnet_conf
        settings, last = _efficientnet_conf("efficientnet_b0", width_mult=0.25, depth_mult=0.25)
        return EfficientNet(settings, 0.2, num_classes=10, last_channel=last), {
            "library": "torchvision", "class": "EfficientNet", "conf": "efficientnet_b0", "width_mult": 0.25, "depth_mult": 0.25}
    F["efficientnet"] = ("vision", efficientnet, "pixel_values", (3, 32, 32), "logits")

    def timm_model(name, **kw):
        def b():
            import timm
            m = timm.create_model(name, pretrained=False, **kw)
            return m, {"library": "timm", "model": name, **{k: (v if isinstance(v, (int, float, str, list, tuple)) else str(v)) for k, v in kw.items()}}
        return b

    F["convnext"] = ("vision", timm_model("convnext_atto", num_classes=10, dims=(16, 32, 48, 64), depths=(1, 1, 1, 1)), "pixel_values", (3, 32, 32), "logits")
    F["deit"] = ("vision", timm_model("deit_tiny_patch16_224", num_classes=10, img_size=32, patch_size=8, embed_dim=32, depth=2, num_heads=4), "pixel_values", (3, 32, 32), "logits")
    F["swin"] = ("vision", timm_model("swin_tiny_patch4_window7_224", num_classes=10, img_size=32, patch_size=2, window_size=4, embed_dim=16, depths=(1, 1), num_heads=(2, 4)), "pixel_values", (3, 32, 32), "logits")

    def vit():
        import transformers as tf
        cfg = tf.ViTConfig(image_size=32, patch_size=8, num_channels=3, hidden_size=32, num_hidden_layers=2,
                           num_attention_heads=4, intermediate_size=64)

        class W(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.m = tf.ViTModel(cfg, add_pooling_layer=False)

            def forward(self, pixel_values):
                return self.m(pixel_values=pixel_values).last_hidden_state
        return W(), cfg.to_dict()
    F["vit"] = ("vision", vit, "pixel_values", (3, 32, 32), "last_hidden_state")

    def vit_tv():
        # torchvision's VisionTransformer: nn.MultiheadAttention, whose export is sequence-first
        # (Transposes around the attention, q, k and v gathered from one packed projection).
        # The TorchScript exporter cannot write the fused kernel nn.MultiheadAttention takes in
        # eval mode (aten::_native_multi_head_attention): the fast path off, it writes the ops.
        import torch
        from torchvision.models.vision_transformer import VisionTransformer
        torch.backends.mha.set_fastpath_enabled(False)
        kw = dict(image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=32, mlp_dim=64, num_classes=10)
        m = VisionTransformer(**kw)
        # torchvision zeroes the classifier head: random weights, or every logit is its bias
        torch.nn.init.normal_(m.heads.head.weight, std=0.5)
        torch.nn.init.normal_(m.heads.head.bias, std=0.5)
        return m, {"library": "torchvision", "class": "VisionTransformer", **kw}
    F["vit_tv"] = ("vision", vit_tv, "pixel_values", (3, 32, 32), "logits")

    def whisper():
        import transformers as tf
        cfg = tf.WhisperConfig(vocab_size=128, num_mel_bins=16, encoder_layers=2, encoder_attention_heads=4,
                               decoder_layers=1, decoder_attention_heads=4, d_model=32, encoder_ffn_dim=64,
                               decoder_ffn_dim=64, max_source_positions=24, max_target_positions=16,
                               pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)

        class W(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.m = tf.WhisperModel(cfg).get_encoder()

            def forward(self, input_features):
                return self.m(input_features=input_features).last_hidden_state
        return W(), cfg.to_dict()
    F["whisper_encoder"] = ("audio", whisper, "input_features", (16, 48), "last_hidden_state")

    def vae_block():
        # A VAE decoder's up block (diffusers' shape): GroupNorm, SiLU, Conv, nearest Upsample,
        # Conv, and a ConvTranspose, as a latent decoder ends.
        class B(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv_in = torch.nn.Conv2d(4, 32, 3, padding=1)
                self.norm1 = torch.nn.GroupNorm(8, 32)
                self.conv1 = torch.nn.Conv2d(32, 32, 3, padding=1)
                self.norm2 = torch.nn.GroupNorm(8, 32)
                self.conv2 = torch.nn.Conv2d(32, 32, 3, padding=1)
                self.up = torch.nn.Upsample(scale_factor=2, mode="nearest")
                self.conv_up = torch.nn.Conv2d(32, 16, 3, padding=1)
                self.deconv = torch.nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1)
                self.norm_out = torch.nn.GroupNorm(4, 8)
                self.conv_out = torch.nn.Conv2d(8, 3, 3, padding=1)

            def forward(self, latent):
                h = self.conv_in(latent)
                r = h
                h = self.conv1(torch.nn.functional.silu(self.norm1(h)))
                h = self.conv2(torch.nn.functional.silu(self.norm2(h))) + r
                h = self.conv_up(self.up(h))
                h = self.deconv(h)
                return self.conv_out(torch.nn.functional.silu(self.norm_out(h)))
        return B(), {"library": "carve", "block": "vae decoder up block"}
    F["vae_decoder"] = ("vision", vae_block, "latent", (4, 8, 8), "sample")

    def audio_conv():
        class A(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.c1 = torch.nn.Conv1d(16, 32, 5, padding=2)
                self.b1 = torch.nn.BatchNorm1d(32)
                self.c2 = torch.nn.Conv1d(32, 32, 3, stride=2, padding=1, groups=4)
                self.b2 = torch.nn.BatchNorm1d(32)
                self.pool = torch.nn.MaxPool1d(2)
                self.c3 = torch.nn.Conv1d(32, 8, 1)

            def forward(self, input_features):
                h = torch.relu(self.b1(self.c1(input_features)))
                h = self.pool(torch.relu(self.b2(self.c2(h))))
                return self.c3(h)
        return A(), {"library": "carve", "block": "1-D conv front end"}
    F["audio_conv1d"] = ("audio", audio_conv, "input_features", (16, 64), "features")
    return F


def example(shape, b, seed):
    return np.random.default_rng(seed).standard_normal((b, *shape)).astype(np.float32)


def one(fam, outdir):
    import onnx
    import onnxruntime as ort
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(1234)
    task, build, iname, shape, oname = families()[fam]
    entries, failures = [], []
    try:
        model, cfg = build()
        model.eval()
        # Random running statistics, so that a BatchNormalization that folds badly shows.
        with torch.no_grad():
            for m in model.modules():
                if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                    m.running_mean.uniform_(-0.5, 0.5)
                    m.running_var.uniform_(0.5, 1.5)
    except Exception as e:  # noqa: BLE001
        return [], [{"family": fam, "step": "build", "error": f"{type(e).__name__}: {e}"[:1500]}]
    cfg_file = f"{fam}.config.json"
    with open(os.path.join(outdir, cfg_file), "w") as f:
        json.dump(cfg, f, indent=1, sort_keys=True, default=str)
    tmp = os.path.join(outdir, f".tmp-{fam}")
    os.makedirs(tmp, exist_ok=True)
    ex = torch.from_numpy(example(shape, EXAMPLE_BATCH, 0))
    exporters = ["dynamo", "torchscript"]
    # TorchScript folds BatchNormalization into the Conv before it in eval mode; with the module
    # in eval mode and the training mode preserved it writes the inference BatchNormalization, as
    # older exports (and the ONNX model zoo's) have it, which carve folds at load.
    if any(isinstance(m, torch.nn.modules.batchnorm._BatchNorm) for m in model.modules()):
        exporters.append("torchscript_bn")
    for exporter in exporters:
        name = f"{fam}.{dict(dynamo='dyn', torchscript='ts', torchscript_bn='ts_bn')[exporter]}"
        t = time.time()
        try:
            with torch.no_grad():
                if exporter == "dynamo":
                    from torch.export import Dim
                    last = None
                    for label, dim in (("min 1", lambda: Dim("batch", min=1, max=64)), ("DYNAMIC", lambda: Dim.DYNAMIC)):
                        try:
                            prog = torch.onnx.export(model, (ex,), dynamo=True, input_names=[iname], output_names=[oname],
                                                     dynamic_shapes=({0: dim()},), optimize=True)
                            mp, how = prog.model_proto, f"dynamo, batch {label}"
                            break
                        except Exception as e:  # noqa: BLE001
                            last = e
                    else:
                        raise last
                else:
                    path = os.path.join(tmp, "ts.onnx")
                    torch.onnx.export(model, (ex,), path, dynamo=False, input_names=[iname], output_names=[oname],
                                      dynamic_axes={iname: {0: "batch"}, oname: {0: "batch"}}, opset_version=17,
                                      do_constant_folding=True,
                                      training=torch.onnx.TrainingMode.PRESERVE if exporter == "torchscript_bn" else torch.onnx.TrainingMode.EVAL)
                    mp, how = onnx.load(path), "torchscript, opset 17" + (", BatchNormalization kept" if exporter == "torchscript_bn" else "")
                    if exporter == "torchscript_bn" and not any(n.op_type == "BatchNormalization" for n in mp.graph.node):
                        raise RuntimeError("the export folded every BatchNormalization")
            mp = inline_functions(strip(mp))
            for v in list(mp.graph.input) + list(mp.graph.output):  # the batch dim named batch
                d = v.type.tensor_type.shape.dim[0]
                if not d.HasField("dim_value"):
                    d.dim_param = "batch"
            onnx.save_model(mp, os.path.join(outdir, name + ".onnx"))
            entry = {"name": name, "file": name + ".onnx", "kind": fam, "family": fam, "task": task,
                     "exporter": exporter.split("_")[0], "attention_mask": False, "config": cfg_file,
                     "export": f"torch.onnx.export {how}, {model.__class__.__name__}",
                     "inputs_rule": "stored .npy inputs (standard normal)", "bindings": []}
            entry.update(describe(mp))
            so = ort.SessionOptions()
            so.log_severity_level = 3
            sess = ort.InferenceSession(mp.SerializeToString(), so, providers=["CPUExecutionProvider"])
            worst = 0.0
            for bi, b in enumerate(BATCHES):
                x = example(shape, b, 10 + bi)
                rec = {"dims": {"batch": b}, "inputs": {}, "outputs": {}}
                fn = f"{name}.b{bi}.in.{iname}.npy"
                np.save(os.path.join(outdir, fn), x)
                rec["inputs"][iname] = fn
                y = sess.run(None, {iname: x})[0]
                fn = f"{name}.b{bi}.out.{oname}.npy"
                np.save(os.path.join(outdir, fn), y)
                rec["outputs"][oname] = fn
                entry["bindings"].append(rec)
                with torch.no_grad():
                    want = model(torch.from_numpy(x)).float().numpy()
                worst = max(worst, float(np.abs(want - y).max()))
            entry["torch_vs_ort_max_abs"] = worst
            entries.append(entry)
            log(f"  {name}: {entry['nodes']} nodes, torch vs ort {worst:.2e}, in {time.time() - t:.1f}s")
        except Exception as e:  # noqa: BLE001
            zoo_run.drop(outdir, name)
            failures.append({"family": fam, "step": name, "error": f"{type(e).__name__}: {e}"[:1500]})
            log(f"  {name} FAILED: {type(e).__name__}: {str(e)[:300]}")
    shutil.rmtree(tmp, ignore_errors=True)
    return entries, failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--jobs", type=int, default=min(10, os.cpu_count() or 1))
    a = ap.parse_args()
    fams = [f for f in families() if not a.only or f in a.only.split(",")]
    zoo_run.run(one, fams, a.out, "zoo_vision", versions(), a.jobs)


if __name__ == "__main__":
    main()
