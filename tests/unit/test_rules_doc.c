/* SPDX-License-Identifier: MIT */
/*
 * docs/rules.md must list the catalogue's rules: the table rows
 * "| # | `name` | severity | meaning | triggered by |" in catalogue order, with
 * the catalogue's number, name, severity and one-line meaning verbatim.
 */
#include <cubatchtrace/catalog.h>

#include "../tap.h"

#define MAXROWS 256

struct docrow {
    char num[32], name[128], sev[32], text[512], fix[512];
};

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = 0;
    size_t k = 0;
    while (s[k] == ' ')
        k++;
    memmove(s, s + k, strlen(s + k) + 1);
}

/* Splits "| a | b | c |" into cells; returns how many. */
static int cells(char *line, char **out, int max)
{
    int n = 0;
    char *p = strchr(line, '|');
    while (p && n < max) {
        char *q = strchr(p + 1, '|');
        if (!q)
            break;
        *q = 0;
        out[n] = p + 1;
        trim(out[n]);
        n++;
        p = q;
    }
    return n;
}

int main(void)
{
    const char *top = getenv("top_srcdir");
    char path[4096], line[2048];
    snprintf(path, sizeof path, "%s/docs/rules.md", top ? top : ".");
    FILE *f = fopen(path, "r");
    if (!f) {
        printf("1..1\nnot ok 1 - cannot open %s\n", path);
        return 1;
    }
    static struct docrow rows[MAXROWS];
    int n = 0;
    while (fgets(line, sizeof line, f) && n < MAXROWS) {
        char *c[8];
        if (line[0] != '|')
            continue;
        int k = cells(line, c, 8);
        if (k < 4 || c[0][0] < '0' || c[0][0] > '9')
            continue; /* header, separator, or another table */
        char *name = c[1];
        size_t len = strlen(name);
        if (len >= 2 && name[0] == '`' && name[len - 1] == '`') {
            name[len - 1] = 0;
            name++;
        }
        snprintf(rows[n].num, sizeof rows[n].num, "%s", c[0]);
        snprintf(rows[n].name, sizeof rows[n].name, "%s", name);
        snprintf(rows[n].sev, sizeof rows[n].sev, "%s", c[2]);
        snprintf(rows[n].text, sizeof rows[n].text, "%s", c[3]);
        snprintf(rows[n].fix, sizeof rows[n].fix, "%s", k >= 6 ? c[5] : "");
        n++;
    }
    fclose(f);

    tap_is_u64(n, CBT_RULE_COUNT, "docs/rules.md has one table row per catalogue rule");
    for (unsigned i = 0; i < CBT_RULE_COUNT; i++) {
        const struct cbt_rule_info *r = &cbt_rules[i];
        char num[32];
        snprintf(num, sizeof num, "%u", i);
        if ((int)i >= n) {
            tap_ok(0, "rule %u %s is missing from docs/rules.md", i, r->name);
            continue;
        }
        const struct docrow *d = &rows[i];
        int good = !strcmp(d->num, num) && !strcmp(d->name, r->name) && !strcmp(d->sev, cbt_severity_name(r->severity)) &&
                   !strcmp(d->text, r->text) && cbt_rule_fix(i) && !strcmp(d->fix, cbt_rule_fix(i));
        if (!tap_ok(good, "row %u of docs/rules.md is rule %s (%s)", i, r->name, cbt_severity_name(r->severity))) {
            tap_diag("  catalogue: | %s | `%s` | %s | %s | ... | %s |", num, r->name, cbt_severity_name(r->severity), r->text,
                     cbt_rule_fix(i) ? cbt_rule_fix(i) : "(no fix)");
            tap_diag("  docs:      | %s | `%s` | %s | %s | ... | %s |", d->num, d->name, d->sev, d->text, d->fix);
        }
    }
    return tap_done();
}
