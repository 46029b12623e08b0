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

// writeNpy writes a typed array as a .npy file (version 1.0, little-endian, C order).
function writeNpy(path, data, shape) {
  const fs = require('fs');
  const descr = data instanceof Float32Array ? '<f4' : data instanceof BigInt64Array ? '<i8' : data instanceof Int32Array ? '<i4' : null;
  if (!descr) throw new Error(`${path}: cannot write ${data.constructor.name}`);
  const dims = shape.length === 1 ? `${shape[0]},` : shape.join(', ');
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${dims}), }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1;
  pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  fs.writeFileSync(path, Buffer.concat([pre, Buffer.from(header, 'latin1'), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

module.exports = { inputs, writeNpy };
