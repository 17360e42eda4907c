// The keys the suite opens the frames it records with: those of the box
// under test as the run makes them, K_park (where the box holds one), K_box,
// the issuer keys of its provisioning file (or --restore-issuer-key) and
// the suite's own two issuers, which the box holds for most of the run.
import type { BoxUnderTest } from '../box-under-test.js';
import type { SuiteIssuers } from '../suite-context.js';
import type { SuiteKeys } from './opening-link-capture.js';

export function suiteKeys(box: BoxUnderTest, issuers: SuiteIssuers): SuiteKeys {
  return {
    parkingKeys: box.parkingKey === null ? [] : [box.parkingKey],
    boxKey: box.boxKey,
    issuerKeys: [
      issuers.current.publicKey,
      issuers.previous.publicKey,
      box.issuerKeys.issuerKey,
      box.issuerKeys.issuerKeyPrevious,
    ],
  };
}
