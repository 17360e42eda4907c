// A send of a control command as the dispatcher claims it: its sequence and
// the nonce of its frame (made up here: the tests of the queue seal nothing).
export interface SentControl {
  controlSeq: number;
  nonce: Buffer;
}

export function sent(controlSeq: number): SentControl {
  const nonce = Buffer.alloc(12);
  nonce.writeUInt32BE(controlSeq, 8);
  return { controlSeq, nonce };
}
