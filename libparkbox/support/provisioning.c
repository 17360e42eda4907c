/* Reading a provisioning file (provisioning.h), field by field, so a bad file
 * gives one line naming the field. */
#include "provisioning.h"
#include "json.h"

#include <stdio.h>
#include <string.h>

#define DEFAULT_MIN_BATTERY_MV 3300u

static bool fail(char *error, size_t cap, const char *path, const char *field, const char *why)
{
    snprintf(error, cap, "%s: %s %s", path, field, why);
    return false;
}

/* A key field: absent or null -> *has = false; else exactly `len` bytes of hex. */
static bool key_field(const json *file, const char *name, uint8_t *out, size_t len, bool *has)
{
    const json *v = json_get(file, name);
    *has = false;
    if (v == NULL || v->type == JSON_NULL)
        return true;
    if (v->type != JSON_STRING || !hex_decode(v->string, out, len))
        return false;
    *has = true;
    return true;
}

bool pb_provisioning_read(const char *path, const pb_crypto_port *crypto, pb_provisioning *out,
                          char *error, size_t error_cap)
{
    const char *parse_error = NULL;
    json *file = json_parse_file(path, &parse_error);
    pb_box_config *c = &out->config;
    const char *direction;
    bool has_box_key;
    uint32_t n;
    bool ok = false;

    memset(out, 0, sizeof *out);
    if (file == NULL)
        return fail(error, error_cap, path, "", parse_error);
    if (file->type != JSON_OBJECT) {
        fail(error, error_cap, path, "the file", "is not a JSON object");
        goto done;
    }
    if (!json_u32(file, "module_id", &c->module_id)) {
        fail(error, error_cap, path, "module_id", "must be an integer from 0 to 4294967295");
        goto done;
    }
    if (!json_u32(file, "parking_id", &c->parking_id)) {
        fail(error, error_cap, path, "parking_id", "must be an integer from 0 to 4294967295");
        goto done;
    }
    direction = json_str(file, "direction");
    if (direction != NULL && strcmp(direction, "entrance") == 0) {
        c->direction = PB_DIRECTION_ENTRANCE;
    } else if (direction != NULL && strcmp(direction, "exit") == 0) {
        c->direction = PB_DIRECTION_EXIT;
    } else {
        fail(error, error_cap, path, "direction", "must be \"entrance\" or \"exit\"");
        goto done;
    }
    if (!key_field(file, "parking_key", c->parking_key, PB_KEY_LEN, &c->has_parking_key)) {
        fail(error, error_cap, path, "parking_key", "must be 32 hex digits or null");
        goto done;
    }
    if (!key_field(file, "parking_key_next", c->parking_key_next, PB_KEY_LEN, &c->has_parking_key_next)) {
        fail(error, error_cap, path, "parking_key_next", "must be 32 hex digits or null");
        goto done;
    }
    if (!key_field(file, "box_key", c->box_key, PB_KEY_LEN, &has_box_key) || !has_box_key) {
        fail(error, error_cap, path, "box_key", "must be 32 hex digits");
        goto done;
    }
    if (!key_field(file, "issuer_key", out->issuer_key, PB_PUBLIC_KEY_LEN, &out->has_issuer_key) ||
        (out->has_issuer_key && !crypto->p256_point_valid(crypto->ctx, out->issuer_key))) {
        fail(error, error_cap, path, "issuer_key", "must be 128 hex digits (a P-256 point X || Y) or null");
        goto done;
    }
    if (!key_field(file, "issuer_key_previous", out->issuer_key_previous, PB_PUBLIC_KEY_LEN,
                   &out->has_issuer_key_previous) ||
        (out->has_issuer_key_previous && !crypto->p256_point_valid(crypto->ctx, out->issuer_key_previous))) {
        fail(error, error_cap, path, "issuer_key_previous",
             "must be 128 hex digits (a P-256 point X || Y) or null");
        goto done;
    }
    c->skew_seconds = PB_DEFAULT_SKEW_SECONDS;
    if (json_get(file, "skew_seconds") != NULL && !json_u32(file, "skew_seconds", &c->skew_seconds)) {
        fail(error, error_cap, path, "skew_seconds", "must be an integer from 0 to 4294967295");
        goto done;
    }
    n = DEFAULT_MIN_BATTERY_MV;
    if (json_get(file, "min_battery_mv") != NULL && (!json_u32(file, "min_battery_mv", &n) || n > 0xFFFFu)) {
        fail(error, error_cap, path, "min_battery_mv", "must be an integer from 0 to 65535");
        goto done;
    }
    c->min_battery_mv = (uint16_t)n;
    c->revocation_capacity = PB_REVOCATION_CAPACITY;
    ok = true;
done:
    json_free(file);
    return ok;
}
