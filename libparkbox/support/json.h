/* A small JSON reader for the host program and the tests (not the core: it
 * allocates). Reads a whole document into a tree; numbers are doubles, which
 * hold every u32 of the protocol exactly. */
#ifndef PB_JSON_H
#define PB_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } json_type;

typedef struct json {
    json_type type;
    bool boolean;
    double number;
    char *string;           /* JSON_STRING: NUL-terminated, UTF-8 */
    struct json **items;    /* JSON_ARRAY and JSON_OBJECT values */
    char **keys;            /* JSON_OBJECT keys */
    size_t count;
} json;

/* Parses `text`; NULL on a syntax error (with *error set to a message). */
json *json_parse(const char *text, const char **error);
/* Reads and parses a file; NULL on error (message in *error). */
json *json_parse_file(const char *path, const char **error);
void json_free(json *value);

/* The member `key` of an object, or NULL. */
const json *json_get(const json *object, const char *key);
/* Item i of an array, or NULL. */
const json *json_at(const json *array, size_t i);
/* A member as u32 (false when absent, not a whole number, or out of range). */
bool json_u32(const json *object, const char *key, uint32_t *out);
/* The member as a string, or NULL. */
const char *json_str(const json *object, const char *key);

/* Hex to bytes: true when `hex` is exactly 2 * len hex digits. */
bool hex_decode(const char *hex, uint8_t *out, size_t len);
/* Hex of any length: the byte count in *len, at most cap. */
bool hex_decode_any(const char *hex, uint8_t *out, size_t cap, size_t *len);

#endif
