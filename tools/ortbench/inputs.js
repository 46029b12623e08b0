// inputs.js makes ort_node.js's inputs; ort_py.py's make_input is the same rule in Python.
'use strict';

function inputs(name, type, dims, b, s) {
  const shape = dims.map((d) => (typeof d === 'number' && d >= 0 ? d : d === 'batch' ? b : s));
  const n = shape.reduce((x, y) => x * y, 1);
  const lower = name.toLowerCase();
  const mask = lower.includes('mask');
  const ids = lower.includes('input_ids');
  let data;
  switch (type) {
    case 'int64':
      data = new BigInt64Array(n);
      for (let i = 0; i < n; i++) data[i] = BigInt(mask ? 1 : ids ? (7 * i + 3) % 50 : 0);
      break;
    case 'int32':
      data = new Int32Array(n);
      for (let i = 0; i < n; i++) data[i] = mask ? 1 : ids ? (7 * i + 3) % 50 : 0;
      break;
    case 'float32':
      data = new Float32Array(n);
      for (let i = 0; i < n; i++) data[i] = mask ? 1 : Math.sin(0.37 * i);
      break;
    default:
      throw new Error(`input ${name}: type ${type} is not supported`);
  }
  return { shape, data };
}

module.exports = { inputs };
