// Payments: the provider interface, the built-in sandbox, its pages.
//
// The feature's public face: another folder of api/ imports it only from
// here (eslint.config.js, `featureImportConfigs`).
export type { PaymentProvider, PaymentRequest } from './provider.js';
export {
  NEW_PAYMENT_COLUMNS,
  type NewPayment,
  newPaymentValues,
  PaymentRepository,
  type PaymentRow,
  type PaymentState,
  sessionPaymentState,
} from './repository.js';
export { paymentErrorPages, payRoutes } from './routes.js';
export { SandboxProvider } from './sandbox.js';
