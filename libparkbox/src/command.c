/* Parsing command frames (docs/protocol.md, Command frame; steps 1, 2, 5). */
#include "command.h"
#include "bytes.h"

bool pb_is_access_kind(uint8_t kind)
{
    return kind == PB_KIND_ACCESS || kind == PB_KIND_ACCESS_SIGNED;
}

bool pb_is_control_kind(uint8_t kind)
{
    return kind == PB_KIND_BATTERY_QUERY || kind == PB_KIND_TIME_SET ||
           kind == PB_KIND_REVOKE || kind == PB_KIND_SET_ISSUER;
}

uint8_t pb_parse_header(const uint8_t *frame, size_t len, pb_header *h)
{
    uint8_t kind;
    size_t fixed;

    /* Step 1: an empty frame, then the version byte. */
    if (len == 0)
        return PB_STATUS_MALFORMED;
    if (frame[PB_CMD_VERSION] != PB_VERSION)
        return PB_STATUS_UNSUPPORTED_VERSION;
    /* Step 2: one of the six kinds, and at least its fixed part. */
    if (len < 2)
        return PB_STATUS_MALFORMED;
    kind = frame[PB_CMD_KIND];
    if (!pb_is_access_kind(kind) && !pb_is_control_kind(kind))
        return PB_STATUS_MALFORMED;
    fixed = kind == PB_KIND_ACCESS_SIGNED ? PB_SIGNED_FIXED_LEN : PB_SEALED_FIXED_LEN;
    if (len < fixed)
        return PB_STATUS_MALFORMED;
    h->kind = kind;
    h->key_id = pb_get_u32(frame + PB_CMD_KEY_ID);
    h->scope = pb_get_u32(frame + PB_CMD_SCOPE);
    h->nonce = frame + PB_CMD_NONCE;
    return PB_STATUS_OK;
}

bool pb_parse_access_body(const uint8_t *body, size_t len, pb_access_body *out)
{
    uint8_t count;
    if (len < PB_ACCESS_MODULE_IDS)
        return false;
    count = body[PB_ACCESS_MODULE_COUNT];
    if (count < 1 || count > PB_MODULES_MAX || len != PB_ACCESS_MODULE_IDS + 4u * count)
        return false;
    out->not_before = pb_get_u32(body + PB_ACCESS_NOT_BEFORE);
    out->not_after = pb_get_u32(body + PB_ACCESS_NOT_AFTER);
    out->max_entries = body[PB_ACCESS_MAX_ENTRIES];
    out->max_exits = body[PB_ACCESS_MAX_EXITS];
    out->module_count = count;
    out->module_ids = body + PB_ACCESS_MODULE_IDS;
    return true;
}

bool pb_parse_revoke_body(const uint8_t *body, size_t len, pb_revoke_body *out)
{
    uint8_t count;
    if (len < 1)
        return false;
    count = body[0];
    if (count < 1 || count > PB_REVOKE_ENTRIES_MAX || len != 1u + PB_REVOKE_ENTRY_LEN * count)
        return false;
    out->count = count;
    out->entries = body + 1;
    return true;
}

bool pb_is_zero(const uint8_t *p, size_t n)
{
    uint8_t any = 0;
    size_t i;
    for (i = 0; i < n; i++)
        any |= p[i];
    return any == 0;
}

bool pb_check_set_issuer_body(const pb_crypto_port *crypto, const uint8_t *body, size_t len)
{
    const uint8_t *previous = body + PB_PUBLIC_KEY_LEN;
    if (len != PB_SET_ISSUER_BODY_LEN)
        return false;
    /* Only issuer_key_previous may be none (64 zero bytes). */
    if (!crypto->p256_point_valid(crypto->ctx, body))
        return false;
    return pb_is_zero(previous, PB_PUBLIC_KEY_LEN) ||
           crypto->p256_point_valid(crypto->ctx, previous);
}

bool pb_access_lists_module(const pb_access_body *body, uint32_t module_id)
{
    unsigned i;
    for (i = 0; i < body->module_count; i++)
        if (pb_get_u32(body->module_ids + 4u * i) == module_id)
            return true;
    return false;
}
