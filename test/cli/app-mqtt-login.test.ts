// `parkbench app` refused by the broker's login: one line that says which
// accounts the broker takes and how to get one, not the bare MQTT refusal.
import test from 'ava';
import { startBroker } from '../helpers/broker.js';
import { runCli } from '../helpers/run-cli.js';

test('a refused MQTT login names the operator accounts and how to make one', async (t) => {
  const broker = await startBroker({
    authenticate: (_client, _username, _password, done) => {
      done(Object.assign(new Error('refused'), { returnCode: 4 }), false);
    },
  });
  t.teardown(() => broker.close());
  const result = await runCli([
    'app',
    ...['--server', 'http://127.0.0.1:9', '--mqtt', broker.url],
    ...['--mqtt-username', 'op-gone', '--mqtt-password', 'stale'],
    ...[
      '--client-app-id',
      'id',
      '--client-secret',
      'secret',
      '--email',
      'a@b.co',
      '--password',
      'pw',
      '--parking',
      '2',
    ],
  ]);
  t.is(result.code, 1, result.stdout);
  t.regex(result.stderr, /Bad username or password/);
  t.regex(result.stderr, /parkbench admin demo` another \(op-demo-tools/);
  t.regex(result.stderr, /parkbench admin mqtt-client add --name NAME --role operator/);
  t.is(result.stderr.trim().split('\n').length, 1, 'one line');
});
