// `parkbench reserve`, its flags read (commands/reserve.ts): one POST of the
// reservation, which with --wait stays open until the box is the caller's
// or the wait ends (the service queues it; the client does not poll), then
// the token on stdout (or the answer with --json). Ctrl-C (or SIGTERM)
// closes the request, and the service drops the place in the queue.
import { CliError, ExitCode } from '../errors.js';
import { CALL_TIMEOUT_MS, OperatorClient, reservedLine, ServiceRefused } from '../service/client.js';
import { reserveRequest, type ReserveFlags } from '../service/reservation-flags.js';
import { serviceFailure, whileNotInterrupted } from '../service/interrupt.js';

export async function runReserve(flags: ReserveFlags): Promise<void> {
  const request = reserveRequest(flags, process.env);
  const client = new OperatorClient(request.service);
  const body = {
    ttl_seconds: request.ttlSeconds,
    ...(request.waitSeconds > 0 ? { wait_seconds: request.waitSeconds } : {}),
    ...(request.note === undefined ? {} : { note: request.note }),
  };
  let answer: { token?: unknown };
  try {
    answer = await whileNotInterrupted('left the queue', (signal) =>
      client.call<{ token?: unknown }>('POST', `/api/operator/boxes/${request.moduleId}/reservation`, body, {
        // The service answers when the wait ends: the wait, plus the time of an ordinary call.
        timeoutMs: request.waitSeconds * 1000 + CALL_TIMEOUT_MS,
        signal,
      }),
    );
  } catch (error) {
    if (error instanceof ServiceRefused && error.code === 'box_reserved')
      throw new CliError(reservedLine(request.moduleId, error), ExitCode.boxReserved);
    throw serviceFailure(error);
  }
  if (typeof answer.token !== 'string') throw new CliError('the service answered without a token');
  process.stdout.write(request.json ? `${JSON.stringify(answer, null, 2)}\n` : `${answer.token}\n`);
}
