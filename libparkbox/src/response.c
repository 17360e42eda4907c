/* The response frame (docs/protocol.md, Response frame): 24 bytes of fields
 * and a CCM tag under K_box over an empty plaintext, nonce = module_id ||
 * box_seq || box_time, AAD = bytes 0..23 || bytes 10..21 of the command
 * answered (12 zero bytes for a status report or a command under 22 bytes):
 * the AAD binds the answer to its command. */
#include "parkbox.h"
#include "bytes.h"

#include <string.h>

#define FIELDS_LEN 24u

int pb_response_seal(const pb_crypto_port *crypto, const uint8_t box_key[PB_KEY_LEN],
                     const pb_response_fields *f, const uint8_t *command,
                     size_t command_len, uint8_t out[PB_RESPONSE_LEN])
{
    uint8_t aad[FIELDS_LEN + PB_NONCE_LEN];
    uint8_t nonce[PB_NONCE_LEN];

    out[PB_RSP_VERSION] = PB_VERSION;
    out[PB_RSP_STATUS] = f->status;
    out[PB_RSP_KIND] = f->kind;
    pb_put_u32(out + PB_RSP_MODULE_ID, f->module_id);
    pb_put_u32(out + PB_RSP_KEY_ID, f->key_id);
    pb_put_u32(out + PB_RSP_BOX_SEQ, f->box_seq);
    pb_put_u32(out + PB_RSP_BOX_TIME, f->box_time);
    pb_put_u16(out + PB_RSP_BATTERY_MV, f->battery_mv);
    out[PB_RSP_BARRIER] = f->barrier;
    out[PB_RSP_DIRECTION] = f->direction;
    out[PB_RSP_REMAINING] = f->remaining;

    memcpy(aad, out, FIELDS_LEN);
    if (command != NULL && command_len >= PB_HEADER_LEN)
        memcpy(aad + FIELDS_LEN, command + PB_CMD_NONCE, PB_NONCE_LEN);
    else
        memset(aad + FIELDS_LEN, 0, PB_NONCE_LEN);
    pb_put_u32(nonce, f->module_id);
    pb_put_u32(nonce + 4, f->box_seq);
    pb_put_u32(nonce + 8, f->box_time);
    return pb_ccm_seal(crypto, box_key, nonce, aad, sizeof aad, NULL, 0, out + PB_RSP_TAG);
}
