// Tests that need a Debian tool (socat for pty pairs, mosquitto for an
// external broker, PostgreSQL's server binaries, chromium, and curl, jq and
// mosquitto-clients for the walk-through of docs/api.md, tshark for the
// Wireshark dissector, cmake, a C compiler and mbed TLS's headers for
// libparkbox) are declared through `testNeeding`, so that `npm test` on a
// machine with only Node.js and npm passes: without the tool those tests are
// skipped, with one line naming the package to install (chromium: the
// browser tests of the bench page, test/bench-page/). Under CI (`CI=true`,
// as .ci/run runs) nothing may be skipped: the same line fails the file.
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { ImplementationFn, SerialFn, TestFn } from 'ava';
import { CHROMIUM_PATH, chromiumInstalled } from '../../testkit/chromium.js';
import { postgresBinDir } from '../../testkit/postgres-server.js';
import { EXISTING_SERVER_VARIABLE } from './postgres.js';

/** The tools tests run, with the Debian package that provides each. */
const TOOLS = {
  socat: { package: 'socat', why: 'a pty pair stands in for a serial cable' },
  mosquitto: { package: 'mosquitto', why: 'a real external MQTT broker' },
  // Not on PATH in Debian's package: found in /usr/lib/postgresql/N/bin (postgresBinDir).
  postgres: {
    package: 'postgresql',
    why: `a real PostgreSQL server, or an existing one named by ${EXISTING_SERVER_VARIABLE}`,
  },
  chromium: { package: 'chromium', why: "the bench page's browser tests drive Debian's chromium" },
  // The tools of docs/api.md's walk-through, which test/e2e/api-walkthrough.test.ts runs as a script.
  curl: { package: 'curl', why: "docs/api.md's walk-through calls the API with curl" },
  jq: { package: 'jq', why: "docs/api.md's walk-through reads its ids and tokens from the responses with jq" },
  mosquitto_sub: {
    package: 'mosquitto-clients',
    why: "docs/api.md's walk-through sends a box its command with mosquitto_pub and reads the answer with mosquitto_sub",
  },
  tshark: {
    package: 'tshark',
    why: 'the Wireshark dissector (tools/wireshark/parkbench.lua) is run by tshark over real captures',
  },
  // libparkbox's build (test/libparkbox/): parkbox-host made with CMake.
  cmake: { package: 'cmake', why: 'libparkbox and parkbox-host are built with CMake' },
  cc: { package: 'gcc', why: 'libparkbox is C, built with the C compiler' },
  // Headers, not a command: found where Debian puts them.
  mbedtls: { package: 'libmbedtls-dev', why: "libparkbox's default crypto port is mbed TLS" },
} as const;

const MBEDTLS_HEADER = '/usr/include/mbedtls/ecdsa.h';

export type Tool = keyof typeof TOOLS;

/** How a test file declares a test; `test` and `test.skip` both are one. */
export type DeclareTest = (title: string, implementation: ImplementationFn<[]>) => void;

/** The one line said when `tool` is missing, in a skip and in a failure alike. */
export function missingToolLine(tool: Tool): string {
  const { package: name, why } = TOOLS[tool];
  const where =
    tool === 'chromium'
      ? `is not at ${CHROMIUM_PATH}`
      : tool === 'postgres'
        ? 'is not installed'
        : tool === 'mbedtls'
          ? `has no headers at ${MBEDTLS_HEADER}`
          : 'is not on PATH';
  return `${tool} ${where} (${why}): install the Debian package with \`apt-get install ${name}\``;
}

/** Whether an executable named `tool` is in one of PATH's folders (what spawn would find). */
export function onPath(tool: string, path = process.env.PATH ?? ''): boolean {
  return path
    .split(delimiter)
    .filter((folder) => folder !== '')
    .some((folder) => {
      try {
        accessSync(join(folder, tool), constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
}

/** chromium at the path the tests launch (playwright is given that path, not PATH's); PostgreSQL's server
 * binaries where Debian puts them (or an existing server); the others on PATH. */
function available(tool: Tool): boolean {
  if (tool === 'chromium') return chromiumInstalled();
  if (tool === 'mbedtls') return existsSync(MBEDTLS_HEADER);
  if (tool !== 'postgres') return onPath(tool);
  return (process.env[EXISTING_SERVER_VARIABLE] ?? '') !== '' || postgresBinDir() !== undefined;
}

function inCi(): boolean {
  const value = process.env.CI ?? '';
  return value !== '' && value !== 'false' && value !== '0';
}

// One line per tool per test file (each file runs in its own process).
const said = new Set<Tool>();

/**
 * `test` when `tool` (each of the tools) is on PATH; otherwise `test.skip`
 * after one line on stderr, or, under CI, an error with that same line (the
 * file fails).
 */
export function testNeeding(tools: Tool | readonly Tool[], test: TestFn | SerialFn): DeclareTest {
  const tool = (typeof tools === 'string' ? [tools] : tools).find((each) => !available(each));
  if (tool === undefined) return test;
  const line = missingToolLine(tool);
  if (inCi()) throw new Error(`CI=true: ${line}`);
  if (!said.has(tool)) {
    said.add(tool);
    process.stderr.write(`skipping the tests that need ${tool}: ${line}\n`);
  }
  return (title, implementation) =>
    test.skip(`${title} [skipped: needs ${tool}, apt-get install ${TOOLS[tool].package}]`, implementation);
}
