// Every case, in the order they run, for one box. The barrier cycle goes
// first, while the barrier is most likely closed; TIME_SET goes after the
// sealed window cases so it cannot move the clock under them. The signed
// window cases of a box without K_park need the suite's issuers, so they come
// after it: each case learns the clock afresh, so that is safe. Version 2: the
// suite's issuers are installed before any signed case; the rotation drops
// the previous issuer after the cases that use it; the power cycle runs
// before the revocation list is filled, and the list is filled last but one,
// as it stays full for a minute.
import type { BoxUnderTest } from '../box-under-test.js';
import { accessCases } from './access-cases.js';
import type { ConformanceCase } from './conformance-case.js';
import { controlCases } from './control-cases.js';
import { frameCases } from './frame-cases.js';
import { linkCases } from './link-cases.js';
import { powerCycleCase } from './power-cycle-case.js';
import { revocationCases } from './revocation-cases.js';
import { setIssuerCases } from './set-issuer-cases.js';
import { sealedWithoutParkingKey, signedCases } from './signed-cases.js';

/** Which cases: version 1 alone (a box on version 1 firmware, which answers
 * every version 2 kind MALFORMED), or all of them. */
export type ProtocolVersion = 1 | 2;

/** The cases for `box`: the sealed ACCESS cases where it holds K_park, else
 * the one case that a sealed ACCESS is refused and the window, scope,
 * module list and tries cases by ACCESS_SIGNED; every other case everywhere.
 * Version 1: the cases of version 1 alone (a box holding K_park). */
export function casesFor(
  box: Pick<BoxUnderTest, 'parkingKey'>,
  protocol: ProtocolVersion = 2,
): readonly ConformanceCase[] {
  const withParkingKey = box.parkingKey !== null;
  if (protocol === 1)
    return [
      ...accessCases,
      ...frameCases.filter((conformanceCase) => conformanceCase.version2 !== true),
      ...controlCases,
      ...linkCases,
    ];
  const sealed = (cases: readonly ConformanceCase[]): ConformanceCase[] =>
    cases.filter((conformanceCase) => withParkingKey || conformanceCase.needsParkingKey !== true);
  const revocation = revocationCases(withParkingKey);
  return [
    ...(withParkingKey ? accessCases : [sealedWithoutParkingKey]),
    ...sealed(frameCases),
    ...controlCases,
    ...signedCases(withParkingKey),
    ...setIssuerCases,
    ...revocation.early,
    powerCycleCase,
    revocation.full,
    ...linkCases,
  ];
}

export type { ConformanceCase };
