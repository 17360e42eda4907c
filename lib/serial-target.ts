// `--serial PATH[:BAUD]`, as the simulator, the gateway and the conformance
// suite take it. docs/protocol.md, Sizes: serial links default to 115200 baud, 8N1.

export const DEFAULT_BAUD_RATE = 115_200;

export interface SerialTarget {
  readonly path: string;
  readonly baudRate: number;
}

const STANDARD_BAUD_RATES = [
  1_200, 2_400, 4_800, 9_600, 19_200, 38_400, 57_600, 115_200, 230_400, 460_800, 921_600, 1_000_000, 2_000_000,
];

export function parseSerialTarget(text: string): SerialTarget {
  const match = /^(.+?)(?::(\d+))?$/.exec(text.trim());
  const path = match?.[1];
  if (match === null || path === undefined || path === '')
    throw new RangeError(`--serial wants PATH[:BAUD], got "${text}"`);
  if (match[2] === undefined) return { path, baudRate: DEFAULT_BAUD_RATE };
  const baudRate = Number(match[2]);
  if (!STANDARD_BAUD_RATES.includes(baudRate)) {
    throw new RangeError(`--serial baud rate ${match[2]} is not one of ${STANDARD_BAUD_RATES.join(', ')}`);
  }
  return { path, baudRate };
}
