// ONNX Runtime's side of benchmarks/models/bench.py: one model in one process, driven over stdin.
//
//   node ort_worker.js model.onnx input.npy expected.npy THREADS
//
// Creates the session (CPU execution provider, graphOptimizationLevel 'all', THREADS intra-op
// threads, one inter-op thread), runs once and prints one JSON line: load_ms (session creation),
// first_run_ms, max_abs_diff against expected.npy. Then each line "K" on stdin runs K times and
// prints {"ms": [...]}; end of input ends the process.
'use strict';
const fs = require('fs');
const readline = require('readline');
const ort = require('onnxruntime-node');

function readNpy(path) {
  const b = fs.readFileSync(path);
  if (b.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(path + ': not a .npy file');
  const major = b[6];
  const hlen = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = b.toString('latin1', start, start + hlen);
  if (!/'descr':\s*'<f4'/.test(header) || /'fortran_order':\s*True/.test(header))
    throw new Error(path + ': only little-endian float32 in C order is read');
  const dims = header.match(/'shape':\s*\(([^)]*)\)/)[1].split(',').map(s => s.trim()).filter(s => s).map(Number);
  const off = start + hlen;
  const data = new Float32Array(b.buffer.slice(b.byteOffset + off, b.byteOffset + b.length));
  return { dims, data };
}

async function main() {
  const [model, inputPath, expectPath, threads] = process.argv.slice(2);
  const x = readNpy(inputPath);
  const want = readNpy(expectPath);
  let t0 = process.hrtime.bigint();
  const ms = t => Number(process.hrtime.bigint() - t) / 1e6;
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: Number(threads),
    interOpNumThreads: 1,
    executionMode: 'sequential',
  });
  const loadMs = ms(t0);
  const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', x.data, x.dims) };
  t0 = process.hrtime.bigint();
  const out = await session.run(feeds);
  const firstMs = ms(t0);
  const y = out[session.outputNames[0]];
  let diff = y.dims.join() === want.dims.join() ? 0 : Infinity;
  for (let i = 0; isFinite(diff) && i < want.data.length; ++i) diff = Math.max(diff, Math.abs(y.data[i] - want.data[i]));
  console.log(JSON.stringify({ load_ms: loadMs, first_run_ms: firstMs, max_abs_diff: isFinite(diff) ? diff : null }));
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    const times = [];
    for (let k = Number(line); k > 0; --k) {
      const t = process.hrtime.bigint();
      await session.run(feeds);
      times.push(ms(t));
    }
    console.log(JSON.stringify({ ms: times }));
  }
}
main().catch(e => { console.error('ort_worker: ' + e.message); process.exit(2); });
