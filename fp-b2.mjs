import { build } from 'esbuild';
const r = await build({ entryPoints: ['functions/paymethods-get.ts'], bundle: true, platform: 'node', format: 'esm', write: false, metafile: true, mainFields: ['module','main'], target: 'node22', define: { TOKENIZE_SCRIPT: '""' }, outfile: 'bundle.mjs', logLevel: 'silent' });
const [o] = Object.values(r.metafile.outputs);
for (const [f,i] of Object.entries(o.inputs)) if (i.bytesInOutput>0 && /^node_modules\/@aws-sdk\/client-kms/.test(f)) console.log(f, i.bytesInOutput);
