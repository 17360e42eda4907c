/* A small recursive-descent JSON reader (json.h). */
#include "json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
    const char *p;
    const char *error;
    int depth;
} parser;

#define MAX_DEPTH 64

static json *parse_value(parser *ps);

static void skip_ws(parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
        ps->p++;
}

static json *node(json_type type)
{
    json *v = calloc(1, sizeof *v);
    if (v != NULL)
        v->type = type;
    return v;
}

static bool push_item(json *v, json *item, char *key)
{
    json **items = realloc(v->items, (v->count + 1) * sizeof *items);
    if (items == NULL)
        return false;
    v->items = items;
    if (v->type == JSON_OBJECT) {
        char **keys = realloc(v->keys, (v->count + 1) * sizeof *keys);
        if (keys == NULL)
            return false;
        v->keys = keys;
        v->keys[v->count] = key;
    }
    v->items[v->count++] = item;
    return true;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static void put_utf8(char *out, size_t *n, unsigned cp)
{
    if (cp < 0x80) {
        out[(*n)++] = (char)cp;
    } else if (cp < 0x800) {
        out[(*n)++] = (char)(0xC0 | (cp >> 6));
        out[(*n)++] = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out[(*n)++] = (char)(0xE0 | (cp >> 12));
        out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[(*n)++] = (char)(0x80 | (cp & 0x3F));
    } else {
        out[(*n)++] = (char)(0xF0 | (cp >> 18));
        out[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
        out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[(*n)++] = (char)(0x80 | (cp & 0x3F));
    }
}

static bool read_hex4(parser *ps, unsigned *cp)
{
    int i;
    *cp = 0;
    for (i = 0; i < 4; i++) {
        int d = hex_digit(ps->p[i]);
        if (d < 0)
            return false;
        *cp = (*cp << 4) | (unsigned)d;
    }
    ps->p += 4;
    return true;
}

static char *parse_string(parser *ps)
{
    const char *start = ++ps->p; /* past the quote */
    size_t cap = 0, n = 0;
    char *out;
    const char *q = start;

    while (*q != '"' && *q != '\0') {
        if (*q == '\\' && q[1] != '\0')
            q++;
        q++;
        cap++;
    }
    if (*q != '"') {
        ps->error = "unterminated string";
        return NULL;
    }
    out = malloc(cap * 4 + 1);
    if (out == NULL)
        return NULL;
    while (*ps->p != '"') {
        char c = *ps->p++;
        if ((unsigned char)c < 0x20) {
            ps->error = "control character in a string";
            free(out);
            return NULL;
        }
        if (c != '\\') {
            out[n++] = c;
            continue;
        }
        c = *ps->p++;
        switch (c) {
        case '"': out[n++] = '"'; break;
        case '\\': out[n++] = '\\'; break;
        case '/': out[n++] = '/'; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case 'u': {
            unsigned cp, low;
            if (!read_hex4(ps, &cp)) {
                ps->error = "bad \\u escape";
                free(out);
                return NULL;
            }
            if (cp >= 0xD800 && cp < 0xDC00 && ps->p[0] == '\\' && ps->p[1] == 'u') {
                ps->p += 2;
                if (!read_hex4(ps, &low) || low < 0xDC00 || low > 0xDFFF) {
                    ps->error = "bad surrogate pair";
                    free(out);
                    return NULL;
                }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            }
            put_utf8(out, &n, cp);
            break;
        }
        default:
            ps->error = "bad escape";
            free(out);
            return NULL;
        }
    }
    ps->p++;
    out[n] = '\0';
    return out;
}

static json *parse_number(parser *ps)
{
    char *end;
    json *v;
    double d = strtod(ps->p, &end);
    if (end == ps->p) {
        ps->error = "unexpected character";
        return NULL;
    }
    ps->p = end;
    v = node(JSON_NUMBER);
    if (v != NULL)
        v->number = d;
    return v;
}

static json *parse_container(parser *ps, bool object)
{
    json *v = node(object ? JSON_OBJECT : JSON_ARRAY);
    char close = object ? '}' : ']';
    if (v == NULL)
        return NULL;
    if (++ps->depth > MAX_DEPTH) {
        ps->error = "nested too deep";
        json_free(v);
        return NULL;
    }
    ps->p++;
    skip_ws(ps);
    if (*ps->p == close) {
        ps->p++;
        ps->depth--;
        return v;
    }
    for (;;) {
        char *key = NULL;
        json *item;
        skip_ws(ps);
        if (object) {
            if (*ps->p != '"') {
                ps->error = "expected a key";
                json_free(v);
                return NULL;
            }
            key = parse_string(ps);
            skip_ws(ps);
            if (key == NULL || *ps->p != ':') {
                if (ps->error == NULL)
                    ps->error = "expected ':'";
                free(key);
                json_free(v);
                return NULL;
            }
            ps->p++;
        }
        item = parse_value(ps);
        if (item == NULL || !push_item(v, item, key)) {
            free(key);
            json_free(item);
            json_free(v);
            return NULL;
        }
        skip_ws(ps);
        if (*ps->p == ',') {
            ps->p++;
            continue;
        }
        if (*ps->p == close) {
            ps->p++;
            ps->depth--;
            return v;
        }
        ps->error = object ? "expected ',' or '}'" : "expected ',' or ']'";
        json_free(v);
        return NULL;
    }
}

static json *parse_value(parser *ps)
{
    skip_ws(ps);
    switch (*ps->p) {
    case '{': return parse_container(ps, true);
    case '[': return parse_container(ps, false);
    case '"': {
        json *v = node(JSON_STRING);
        if (v == NULL)
            return NULL;
        v->string = parse_string(ps);
        if (v->string == NULL) {
            free(v);
            return NULL;
        }
        return v;
    }
    case 't':
    case 'f': {
        bool t = *ps->p == 't';
        const char *word = t ? "true" : "false";
        json *v;
        if (strncmp(ps->p, word, strlen(word)) != 0) {
            ps->error = "unexpected word";
            return NULL;
        }
        ps->p += strlen(word);
        v = node(JSON_BOOL);
        if (v != NULL)
            v->boolean = t;
        return v;
    }
    case 'n':
        if (strncmp(ps->p, "null", 4) != 0) {
            ps->error = "unexpected word";
            return NULL;
        }
        ps->p += 4;
        return node(JSON_NULL);
    default:
        if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9'))
            return parse_number(ps);
        ps->error = *ps->p == '\0' ? "unexpected end" : "unexpected character";
        return NULL;
    }
}

json *json_parse(const char *text, const char **error)
{
    parser ps = { text, NULL, 0 };
    json *v = parse_value(&ps);
    if (v != NULL) {
        skip_ws(&ps);
        if (*ps.p != '\0') {
            ps.error = "trailing characters";
            json_free(v);
            v = NULL;
        }
    }
    if (v == NULL && error != NULL)
        *error = ps.error != NULL ? ps.error : "out of memory";
    return v;
}

json *json_parse_file(const char *path, const char **error)
{
    FILE *f = fopen(path, "rb");
    char *text;
    long size;
    json *v;

    if (f == NULL) {
        *error = "cannot open the file";
        return NULL;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        *error = "cannot read the file";
        return NULL;
    }
    text = malloc((size_t)size + 1);
    if (text == NULL || fread(text, 1, (size_t)size, f) != (size_t)size) {
        free(text);
        fclose(f);
        *error = "cannot read the file";
        return NULL;
    }
    fclose(f);
    text[size] = '\0';
    v = json_parse(text, error);
    free(text);
    return v;
}

void json_free(json *v)
{
    size_t i;
    if (v == NULL)
        return;
    for (i = 0; i < v->count; i++) {
        json_free(v->items[i]);
        if (v->keys != NULL)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->string);
    free(v);
}

const json *json_get(const json *object, const char *key)
{
    size_t i;
    if (object == NULL || object->type != JSON_OBJECT)
        return NULL;
    for (i = 0; i < object->count; i++)
        if (strcmp(object->keys[i], key) == 0)
            return object->items[i];
    return NULL;
}

const json *json_at(const json *array, size_t i)
{
    if (array == NULL || array->type != JSON_ARRAY || i >= array->count)
        return NULL;
    return array->items[i];
}

bool json_u32(const json *object, const char *key, uint32_t *out)
{
    const json *v = json_get(object, key);
    if (v == NULL || v->type != JSON_NUMBER || v->number < 0 || v->number > 4294967295.0 ||
        v->number != (double)(uint32_t)v->number)
        return false;
    *out = (uint32_t)v->number;
    return true;
}

const char *json_str(const json *object, const char *key)
{
    const json *v = json_get(object, key);
    return v != NULL && v->type == JSON_STRING ? v->string : NULL;
}

bool hex_decode_any(const char *hex, uint8_t *out, size_t cap, size_t *len)
{
    size_t n = strlen(hex), i;
    if (n % 2 != 0 || n / 2 > cap)
        return false;
    for (i = 0; i < n / 2; i++) {
        int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        out[i] = (uint8_t)((hi << 4) | lo);
    }
    *len = n / 2;
    return true;
}

bool hex_decode(const char *hex, uint8_t *out, size_t len)
{
    size_t n;
    return strlen(hex) == 2 * len && hex_decode_any(hex, out, len, &n);
}
