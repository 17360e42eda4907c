// Text formats that the wire (MQTT messages, provisioning files, API bodies)
// and the command line check alike, each written once: as a pattern string
// for the OpenAPI schemas, and as a test for code.

/** Standard base64 with its padding (RFC 4648, section 4): what every
 * command and response travels as in JSON. */
export const BASE64_PATTERN = '^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$';
const BASE64 = new RegExp(BASE64_PATTERN);

export function isBase64(text: string): boolean {
  return BASE64.test(text);
}

/** A box's MAC address as the service stores and prints it: six pairs of
 * upper-case hex digits joined by colons (AA:BB:CC:DD:EE:FF). A reader that
 * takes lower case too upper-cases first. */
export const MAC_ADDRESS_PATTERN = '^[0-9A-F]{2}(:[0-9A-F]{2}){5}$';
const MAC_ADDRESS = new RegExp(MAC_ADDRESS_PATTERN);

export function isMacAddress(text: string): boolean {
  return MAC_ADDRESS.test(text);
}
