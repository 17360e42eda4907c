// noble ships no types for its bindings injection point.
declare module '@abandonware/noble/with-bindings.js' {
  /** Makes a noble instance over the given bindings object. */
  const withBindings: (bindings: object) => unknown;
  export default withBindings;
}
