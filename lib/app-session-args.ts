// The `parkbench app` command line that plays one driver session (entrance,
// then exit) against a running `parkbench start`, from what its
// `parkbench ready` JSON line says. One definition for the screenshots
// script and the tests that drive the bench as a newcomer would.

/** The fields of the `parkbench ready` line (whole-bench/start.ts ReadyInfo) the app needs. */
export interface BenchLogin {
  readonly api_url: string;
  readonly mqtt_url: string;
  readonly mqtt_operator: { readonly username: string; readonly password: string };
  readonly client_app_id: string;
  readonly client_secret: string;
  readonly driver: { readonly email: string; readonly password: string };
  readonly parking_id: number;
}

export function appSessionArgs(ready: BenchLogin): string[] {
  return [
    'app',
    ...['--server', ready.api_url, '--mqtt', ready.mqtt_url],
    ...['--mqtt-username', ready.mqtt_operator.username, '--mqtt-password', ready.mqtt_operator.password],
    ...['--client-app-id', ready.client_app_id, '--client-secret', ready.client_secret],
    ...['--email', ready.driver.email, '--password', ready.driver.password],
    ...['--parking', String(ready.parking_id)],
  ];
}
