// `parkbench release`, its flags read (commands/release.ts): one DELETE of
// the reservation with its token.
import { OperatorClient } from '../service/client.js';
import { releaseRequest, type ReleaseFlags } from '../service/reservation-flags.js';
import { serviceFailure } from '../service/interrupt.js';

export async function runRelease(flags: ReleaseFlags): Promise<void> {
  const request = releaseRequest(flags, process.env);
  try {
    await new OperatorClient(request.service).call('DELETE', `/api/operator/boxes/${request.moduleId}/reservation`);
  } catch (error) {
    throw serviceFailure(error);
  }
}
