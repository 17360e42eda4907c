// The suite's size as docs/bench.md states it (Conformance suite: "A run has
// 42 rows on a box holding K_park …"): the cases each kind of box gets, the
// rows of its report, and the one case that runs a key out of tries (step 9),
// sealed where the box holds K_park, by ACCESS_SIGNED where it does not.
import test from 'ava';
import { casesFor } from '../../conformance/cases/index.js';
import { reportRows, RUN_CHECKS } from '../helpers/conformance-fixtures.js';

const withParkingKey = { parkingKey: Buffer.alloc(16, 1) };
const withoutParkingKey = { parkingKey: null };

const triesCases = (box: typeof withParkingKey | typeof withoutParkingKey) =>
  casesFor(box)
    .filter((conformanceCase) => conformanceCase.step === 'checks, step 9')
    .map(({ name, expected, wearing }) => ({ name, expected, wearing }));

test('a box holding K_park: 37 cases, 42 rows; without: 33 cases, 38 rows; --protocol 1: 20 cases, 24 rows', (t) => {
  t.is(casesFor(withParkingKey).length, 37);
  t.is(reportRows(withParkingKey), 42);
  t.is(casesFor(withoutParkingKey).length, 33);
  t.is(reportRows(withoutParkingKey), 38);
  // Version 1: no SET_ISSUER to put back, the 4 checks.
  t.is(casesFor(withParkingKey, 1).length, 20);
  t.is(casesFor(withParkingKey, 1).length + RUN_CHECKS, 24);
});

test('the key with 2 tries used 3 times: sealed with K_park, by ACCESS_SIGNED without, wearing either way', (t) => {
  t.deepEqual(triesCases(withParkingKey), [
    { name: 'a key with 2 tries, used 3 times', expected: '0x00, 0x00, 0x12', wearing: true },
  ]);
  t.deepEqual(triesCases(withoutParkingKey), [
    { name: 'ACCESS_SIGNED a key with 2 tries, used 3 times', expected: '0x00, 0x00, 0x12', wearing: true },
  ]);
});
