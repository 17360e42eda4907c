// The display filters docs/bench.md gives for captures ("See the wire:
// captures in Wireshark") are filters tshark takes with the dissector, and
// each keeps packets of a real capture.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { enhancedPacketBlock } from '../../lib/capture/pcapng.js';
import { testNeeding } from '../helpers/requires.js';
import { writeSampleCapture } from '../helpers/sample-capture.js';
import { framesMatching } from '../helpers/tshark.js';

const withTshark = testNeeding('tshark', test);
const folder = mkdtempSync(join(tmpdir(), 'pb-dissector-docs-'));
test.after.always(() => rmSync(folder, { recursive: true, force: true }));
const sample = writeSampleCapture(join(folder, 'sample.pcapng'));
// The sample, and after it one packet that is no parkbench record (version 2), on its first interface.
const path = join(folder, 'with-a-stranger.pcapng');
writeFileSync(
  path,
  Buffer.concat([readFileSync(sample.path), enhancedPacketBlock(0, 1_767_225_700_000_000n, Buffer.alloc(16, 2))]),
);

const guide = readFileSync(fileURLToPath(new URL('../../docs/bench.md', import.meta.url)), 'utf8');
const start = guide.indexOf('## See the wire: captures in Wireshark');
const next = guide.indexOf('\n## ', start + 1);
const section = guide.slice(start, next === -1 ? undefined : next);
const filters = [...section.matchAll(/^\| `([^`]+)` \| ([^|]+) \|$/gm)].map(([, filter = '', keeps = '']) => ({
  filter,
  keeps: keeps.trim(),
}));

withTshark('every filter of the guide is taken by tshark and keeps packets of a real capture', async (t) => {
  t.true(filters.length >= 10, `${filters.length} filters found in the guide`);
  for (const { filter, keeps } of filters) {
    const frames = await framesMatching(path, filter);
    t.true(frames.length > 0, `${filter} (${keeps})`);
  }
});

withTshark('the filters keep what the guide says they keep', async (t) => {
  t.deepEqual(
    await framesMatching(path, 'parkbench.response && parkbench.status != 0x00'),
    sample.responses.filter((response) => response.fields.status !== 0).map((response) => response.frame),
  );
  t.deepEqual(await framesMatching(path, 'parkbench.malformed'), [sample.packets + 1]);
  t.deepEqual(await framesMatching(path, 'parkbench.command && parkbench.key_id == 42'), [
    sample.named.get('serial ACCESS command'),
  ]);
});
