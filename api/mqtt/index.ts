// The MQTT side of the API: the broker (embedded or external), its accounts
// and ACL, the service that sends commands and ingests box responses.
//
// The feature's public face: another folder of api/ imports it only from
// here (eslint.config.js, `featureImportConfigs`).
export { ensureOperatorClient, mqttUsernameOf } from './clients.js';
export { type MqttConnection, MqttService } from './mqtt-service.js';
