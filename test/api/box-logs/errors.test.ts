// Box-log ingestion refuses with a domain error (api/box-logs/errors.ts),
// not an HTTP type: MQTT ingestion and the admin tools read its kind and
// details; POST /api/box_logs maps it through the registry (the bodies are
// pinned in box-logs.test.ts).
import test from 'ava';
import { BoxLogRefusal } from '../../../api/box-logs/errors.js';
import { ingestThroughGroup } from '../../helpers/box-logs.js';
import type { BoxLogInput } from '../../../api/box-logs/types.js';
import { DomainError } from '../../../api/http/domain-error.js';
import { ApiError } from '../../../api/http/errors.js';
import { testApp } from '../../helpers/api-app.js';
import { seedParking } from '../../helpers/parking.js';
import { value } from '../../helpers/sql.js';

test('an id that names nothing is a not_found BoxLogRefusal, one that does not fit a refused one, both naming the field', async (t) => {
  const app = await testApp(t);
  const parking = await seedParking(app);
  const other = await seedParking(app);
  const entry: BoxLogInput = {
    fo_user_id: null,
    smart_key_id: null,
    equipment_id: parking.entrance.moduleId,
    secured_parking_id: parking.id,
    type: 'in',
    command: null,
    command_decrypted: null,
    response: null,
    response_decrypted: null,
    offline: false,
    created_at: '2026-06-01 08:00:00',
    point_attributes: null,
  };
  const missing = await t.throwsAsync(
    ingestThroughGroup(app.ctx, [{ ...entry, equipment_id: 4242 }], { source: 'mqtt' }),
    {
      instanceOf: BoxLogRefusal,
    },
  );
  t.true(missing instanceof DomainError);
  t.false(missing instanceof ApiError);
  t.is(missing.kind, 'not_found');
  t.deepEqual(missing.details, [{ path: 'box_logs[0].box_log.equipment_id', message: 'no box with module id 4242' }]);
  const unfit = await t.throwsAsync(
    ingestThroughGroup(app.ctx, [entry, { ...entry, equipment_id: other.entrance.moduleId }], { source: 'mqtt' }),
    { instanceOf: BoxLogRefusal },
  );
  t.is(unfit.kind, 'refused');
  t.deepEqual(unfit.details, [
    { path: 'box_logs[1].box_log.equipment_id', message: 'is not a box of secured_parking_id' },
  ]);
  t.is(await value(app.ctx.store, 'SELECT count(*) FROM box_logs'), 0, 'nothing written');
});
