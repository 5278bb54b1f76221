/* text.c - text as the report shows and writes it (report.h): made printable, and escaped for
 * a JSON string and for the rubric's and the shell's lines. */
#include "report.h"

#include <string.h>

/* The length of the UTF-8 sequence at s (1 to 4), or 0 when it is none. */
static size_t utf8_length(const unsigned char *s)
{
    if (s[0] < 0x80)
        return 1;
    size_t length = s[0] >= 0xC2 && s[0] <= 0xDF   ? 2
                    : s[0] >= 0xE0 && s[0] <= 0xEF ? 3
                    : s[0] >= 0xF0 && s[0] <= 0xF4 ? 4
                                                   : 0;
    for (size_t i = 1; i < length; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    /* No overlong forms, no surrogates, nothing past U+10FFFF. */
    if ((length == 3 && s[0] == 0xE0 && s[1] < 0xA0) ||
        (length == 3 && s[0] == 0xED && s[1] >= 0xA0) ||
        (length == 4 && s[0] == 0xF0 && s[1] < 0x90) ||
        (length == 4 && s[0] == 0xF4 && s[1] >= 0x90))
        return 0;
    return length;
}

void text_make_printable(char *text, size_t size)
{
    static char shown[sizeof(((test_outcome *)0)->message) * 4];
    size_t used = 0;
    const unsigned char *s = (const unsigned char *)text;
    while (*s && used + 5 < sizeof shown) {
        const size_t length = utf8_length(s);
        if (length == 1 && (*s >= 0x20 || *s == '\n' || *s == '\t') && *s != 0x7F) {
            shown[used++] = (char)*s++;
        } else if (length > 1) {
            memcpy(shown + used, s, length);
            used += length;
            s += length;
        } else {
            used += (size_t)snprintf(shown + used, sizeof shown - used, "\\x%02X", *s++);
        }
    }
    /* Within size, and never cut inside a character. */
    size_t keep = used < size - 1 ? used : size - 1;
    while (keep > 0 && keep < used && ((unsigned char)shown[keep] & 0xC0) == 0x80)
        keep--;
    memcpy(text, shown, keep);
    text[keep] = '\0';
}

void json_write_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        const size_t length = utf8_length(c);
        if (length == 0) { /* what no reader of JSON would take: shown, not passed on */
            fprintf(out, "\\\\x%02X", *c);
            continue;
        }
        if (length > 1) {
            fwrite(c, 1, length, out);
            c += length - 1;
            continue;
        }
        switch (*c) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\t': fputs("\\t", out); break;
        case '\r': fputs("\\r", out); break;
        default:
            if (*c < 0x20)
                fprintf(out, "\\u%04x", *c);
            else
                fputc(*c, out);
        }
    }
    fputc('"', out);
}

/* Text as harness/report/rubric.awk writes it: a backslash, a tab and a newline escaped. */
void text_write_escaped(FILE *out, const char *text)
{
    for (const char *c = text; *c; c++)
        if (*c == '\\')
            fputs("\\\\", out);
        else if (*c == '\t')
            fputs("\\t", out);
        else if (*c == '\n')
            fputs("\\n", out);
        else
            fputc(*c, out);
}
