// ort_node.js times onnxruntime CPU (the npm package onnxruntime-node) on one ONNX file at
// several (batch, seq) bindings; ortbench.py calls it. It prints one JSON object per binding:
// {"batch", "seq", "p50_ms", "min_ms", "mean_ms", "runs"}.
//
//   node ort_node.js MODEL.onnx THREADS WARMUP RUNS B1xS1 [B2xS2 ...]
//   node ort_node.js --outputs MODEL.onnx THREADS BxS DIR
//
// The second form runs once and writes the inputs and outputs as DIR/in.NAME.npy and
// DIR/out.NAME.npy, for ortbench.py --check.
//
// Inputs follow the runner's random-input rule closely enough for timing (see inputs.js):
// inputs named like a mask are 1, input_ids cycle through small ids, other integers are 0,
// floats are sin(0.37 * i). Dims named "batch" take B; other symbolic dims take S.
'use strict';
const ort = require('onnxruntime-node');
const path = require('path');
const { inputs, writeNpy } = require('./inputs.js');

async function outputs(model, threads, bs, dir) {
  const sess = await ort.InferenceSession.create(model, { intraOpNumThreads: Number(threads) });
  const [b, s] = bs.split('x').map(Number);
  const feeds = {};
  for (const m of sess.inputMetadata) {
    const { shape, data } = inputs(m.name, m.type, m.shape, b, s);
    feeds[m.name] = new ort.Tensor(m.type, data, shape);
    writeNpy(path.join(dir, `in.${m.name}.npy`), data, shape);
  }
  const res = await sess.run(feeds);
  for (const [name, t] of Object.entries(res)) writeNpy(path.join(dir, `out.${name}.npy`), t.data, t.dims);
}

async function main() {
  if (process.argv[2] === '--outputs') return outputs(...process.argv.slice(3));
  const [model, threads, warmup, runs, ...shapes] = process.argv.slice(2);
  const sess = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(threads),
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  for (const bs of shapes) {
    const [b, s] = bs.split('x').map(Number);
    try {
      await timeOne(sess, b, s, Number(warmup), Number(runs));
    } catch (e) {
      console.log(JSON.stringify({ batch: b, seq: s, error: e.message.split('\n')[0] }));
    }
  }
}

async function timeOne(sess, b, s, warmup, runs) {
  const feeds = {};
  for (const m of sess.inputMetadata) {
    const { shape, data } = inputs(m.name, m.type, m.shape, b, s);
    feeds[m.name] = new ort.Tensor(m.type, data, shape);
  }
  for (let i = 0; i < warmup; i++) await sess.run(feeds);
  const lat = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    await sess.run(feeds);
    lat.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  lat.sort((x, y) => x - y);
  const mean = lat.reduce((x, y) => x + y, 0) / lat.length;
  console.log(JSON.stringify({ batch: b, seq: s, p50_ms: lat[Math.floor((lat.length - 1) / 2)], min_ms: lat[0], mean_ms: mean, runs: lat.length }));
}

main().catch((e) => { console.error(`ort_node: ${e.message}`); process.exit(1); });
