// Secrets never reach the logs: run the main flows with a capturing logger.
import { Writable } from 'node:stream';
import { join } from 'node:path';
import test from 'ava';
import { appLogger } from '../../api/app-logger.js';
import { createService } from '../../api/service.js';
import { hashSecret } from '../../api/auth/secrets.js';
import { FakeClock } from '../../lib/fake-clock.js';
import { configWith } from '../../api/config/index.js';
import { ClientAppRepository } from '../../api/auth/client-apps-repository.js';
import { DRIVER, tempDir } from '../helpers/api-app.js';

test('passwords, client secrets and tokens never appear in the logs', async (t) => {
  let logs = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs += chunk.toString();
      done();
    },
  });
  const config = configWith({ databasePath: join(tempDir(t), 'logs.sqlite'), scryptLog2N: 10 });
  const service = await createService(config, {
    clock: new FakeClock(),
    logger: appLogger({ level: 'trace', stream }),
  });
  const { app } = service;
  t.teardown(() => service.close());
  await app.ready();
  const client = { client_app_id: 'log-client', client_secret: 'log-client-secret-value' };
  await new ClientAppRepository(service.ctx.store).insert(
    'log',
    client.client_app_id,
    await hashSecret(client.client_secret, 10),
    0,
  );

  await app.inject({ method: 'POST', url: '/api/car_driver', payload: { api_car_driver_fo_user: DRIVER, ...client } });
  const token = (
    await app.inject({
      method: 'POST',
      url: '/api/oauth/token',
      payload: { grant_type: 'password', username: DRIVER.email, password: DRIVER.password, ...client },
    })
  ).json<{ access_token: string; refresh_token: string }>();
  await app.inject({
    method: 'GET',
    url: '/api/car_driver/me',
    headers: { authorization: `Bearer ${token.access_token}` },
  });
  await app.inject({
    method: 'POST',
    url: '/api/oauth/token',
    payload: { grant_type: 'refresh_token', refresh_token: token.refresh_token, ...client },
  });
  await app.inject({
    method: 'POST',
    url: '/api/oauth/token',
    payload: { grant_type: 'password', username: DRIVER.email, password: 'wrong-password-guess', ...client },
  });

  t.true(logs.includes('request completed'), 'the logger did capture requests');
  for (const secret of [
    DRIVER.password,
    'wrong-password-guess',
    client.client_secret,
    token.access_token,
    token.refresh_token,
  ]) {
    t.false(logs.includes(secret), `a secret leaked into the logs: ${secret.slice(0, 6)}…`);
  }
});
