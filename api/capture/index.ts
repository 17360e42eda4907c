// The capture ring: each box's recent MQTT traffic kept in memory
// (CAPTURE_RING_SECONDS, CAPTURE_RING_MB) and served as a pcapng file
// (docs/capture.md) by the operator API.
//
// The feature's public face: another folder of api/ imports it only from
// here (eslint.config.js, `featureImportConfigs`).
export { CaptureRing, type RecordFields } from './capture-ring.js';
export { captureMicros } from './micros.js';
export { MqttCapture } from './mqtt-capture.js';
export { type CaptureRouteDeps, type CaptureSource, operatorCaptureRoutes, PCAPNG_MEDIA_TYPE } from './routes.js';
