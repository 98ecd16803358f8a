/* SPDX-License-Identifier: MIT */
/*
 * gnuplot for the report (gnuplot.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/util.h"
#include "render/gnuplot.h"

char *cbt_gnuplot_find(void)
{
    const char *want = getenv("CUBATCHTRACE_GNUPLOT");
    bool named = want && *want;
    if (!named)
        want = "gnuplot";
    if (strchr(want, '/')) {
        if (access(want, X_OK) == 0)
            return strdup(want);
    } else {
        const char *path = getenv("PATH");
        char *dup = strdup(path ? path : ""), *save = NULL;
        for (char *d = dup ? strtok_r(dup, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save)) {
            char *p;
            if (asprintf(&p, "%s/%s", *d ? d : ".", want) < 0)
                break;
            struct stat st;
            if (stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0) {
                free(dup);
                return p;
            }
            free(p);
        }
        free(dup);
    }
    if (named)
        cbt_err("CUBATCHTRACE_GNUPLOT=%s: no such program (gnuplot draws the plots; --no-plots for tables only)",
                want);
    else
        cbt_err("gnuplot not found on PATH: install it (Debian: apt-get install gnuplot-nox), name it with "
                "CUBATCHTRACE_GNUPLOT, or use --no-plots for tables only");
    return NULL;
}

/* Runs gnuplot on `script` (its stdin) and returns what it wrote on stdout
 * (malloc'd), NULL after one line on stderr when it could not run, failed or
 * wrote no SVG.  Its stdin, stdout and stderr are served together, so that
 * no pipe fills while we wait on another. */
static char *gnuplot_svg(const char *gnuplot, const char *what, const char *script, size_t slen)
{
    int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
    char *res = NULL, ebuf[512] = "";
    size_t rlen = 0, elen = 0, woff = 0;
    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
        cbt_err("gnuplot: pipe: %s", strerror(errno));
        goto close;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        cbt_err("gnuplot: fork: %s", strerror(errno));
        goto close;
    }
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        execl(gnuplot, gnuplot, (char *)NULL);
        dprintf(2, "cannot run %s: %s", gnuplot, strerror(errno));
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    close(err[1]);
    in[0] = out[1] = err[1] = -1;
    void (*old)(int) = signal(SIGPIPE, SIG_IGN);
    bool failed = false;
    while (out[0] >= 0 || err[0] >= 0) {
        struct pollfd p[3] = {{in[1], POLLOUT, 0}, {out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
        if (poll(p, 3, -1) < 0) {
            if (errno == EINTR)
                continue;
            failed = true;
            break;
        }
        if (in[1] >= 0 && p[0].revents) {
            ssize_t n = write(in[1], script + woff, slen - woff);
            if (n > 0)
                woff += (size_t)n;
            if (n < 0 || woff == slen) { /* done, or gnuplot stopped reading: its status says why */
                close(in[1]);
                in[1] = -1;
            }
        }
        if (out[0] >= 0 && p[1].revents) {
            char *nr = realloc(res, rlen + 65536 + 1);
            ssize_t n = nr ? read(out[0], nr + rlen, 65536) : -1;
            res = nr ? nr : res;
            if (n > 0)
                rlen += (size_t)n;
            else {
                close(out[0]);
                out[0] = -1;
            }
        }
        if (err[0] >= 0 && p[2].revents) {
            char tmp[4096];
            ssize_t n = read(err[0], tmp, sizeof(tmp));
            if (n > 0) {
                size_t k = (size_t)n < sizeof(ebuf) - 1 - elen ? (size_t)n : sizeof(ebuf) - 1 - elen;
                memcpy(ebuf + elen, tmp, k);
                elen += k;
                ebuf[elen] = 0;
            } else {
                close(err[0]);
                err[0] = -1;
            }
        }
        cbt_progress();
    }
    signal(SIGPIPE, old);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    for (char *p = ebuf; *p; p++) /* gnuplot's complaint, one line */
        if (*p == '\n' || *p == '\t')
            *p = ' ';
    if (failed || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        if (WIFEXITED(st))
            cbt_err("%s failed drawing the plot of %s (exit status %d): %.300s", gnuplot, what, WEXITSTATUS(st), ebuf);
        else
            cbt_err("%s failed drawing the plot of %s (signal %d): %.300s", gnuplot, what,
                    WIFSIGNALED(st) ? WTERMSIG(st) : 0, ebuf);
        goto fail;
    }
    if (res)
        res[rlen] = 0;
    if (!res || !strstr(res, "<svg") || !strstr(res, "</svg>")) {
        cbt_err("%s wrote no SVG for the plot of %s: %.300s", gnuplot, what, ebuf);
        goto fail;
    }
    goto close;
fail:
    free(res);
    res = NULL;
close:
    for (int i = 0; i < 2; i++) {
        if (in[i] >= 0)
            close(in[i]);
        if (out[i] >= 0)
            close(out[i]);
        if (err[i] >= 0)
            close(err[i]);
    }
    return res;
}

void cbt_gp_str(FILE *g, const char *s)
{
    fputc('\'', g);
    for (; s && *s; s++) {
        if (*s == '\'')
            fputs("''", g);
        else
            fputc((unsigned char)*s < 0x20 ? ' ' : *s, g);
    }
    fputc('\'', g);
}

/* The settings every plot shares. */
static void gp_head(FILE *g, const char *title)
{
    fputs("set terminal svg size 800,360 dynamic noenhanced font 'sans,11' background rgb 'white'\n"
          "set encoding utf8\n"
          "set style fill solid 0.75 border -1\n"
          "set grid ytics lc rgb '#dddddd'\n"
          "set border 3\nset tics nomirror\n"
          "set linetype 1 lc rgb '#3b7dd8' lw 2 pt 7\nset linetype 2 lc rgb '#e07b39' lw 2 pt 5\n"
          "set linetype 3 lc rgb '#3a9d5d' lw 2 pt 9\nset linetype 4 lc rgb '#c0392b' lw 2 pt 11\n"
          "set linetype 5 lc rgb '#8e6cc4' lw 2 pt 13\nset linetype 6 lc rgb '#7f7f7f' lw 2 pt 3\n"
          "set linetype cycle 6\n",
          g);
    fputs("set title ", g);
    cbt_gp_str(g, title);
    fputc('\n', g);
}

static void plot_free(struct cbt_plot *p)
{
    if (p->g)
        fclose(p->g);
    if (p->t)
        fclose(p->t);
    free(p->script);
    free(p->table);
}

bool cbt_plot_open(struct cbt_plot *p, const char *id, const char *title, const char *caption)
{
    *p = (struct cbt_plot){.id = id, .title = title, .caption = caption};
    p->g = open_memstream(&p->script, &p->slen);
    p->t = open_memstream(&p->table, &p->tlen);
    if (!p->g || !p->t) {
        cbt_err("out of memory");
        plot_free(p);
        return false;
    }
    gp_head(p->g, title);
    fprintf(p->t, "<table class=\"plot-data\" id=\"data-%s\">", id);
    return true;
}

/* The SVG, its element ids (and the references to them) prefixed with the
 * plot's id: gnuplot names its own the same in every plot, and the page holds
 * several. */
static void svg_write(FILE *o, const char *s, const char *end, const char *plot_id)
{
    static const char *const refs[] = {" id='", " id=\"", "href='#", "href=\"#", "url(#"};
    while (s < end) {
        size_t k = 0, len = 0;
        for (; k < sizeof(refs) / sizeof(refs[0]); k++) {
            len = strlen(refs[k]);
            if ((size_t)(end - s) >= len && memcmp(s, refs[k], len) == 0)
                break;
        }
        if (k < sizeof(refs) / sizeof(refs[0])) {
            fwrite(s, 1, len, o);
            fprintf(o, "%s-", plot_id);
            s += len;
        } else
            fputc(*s++, o);
    }
}

/* Draws the plot (unless gnuplot is NULL: tables only) and writes the figure; false after one line on stderr. */
static bool plot_write(FILE *o, struct cbt_plot *p, const char *gnuplot)
{
    fputs("</table>", p->t);
    fclose(p->g);
    fclose(p->t);
    p->g = p->t = NULL;
    char *svg = NULL;
    if (gnuplot && !(svg = gnuplot_svg(gnuplot, p->title, p->script, p->slen)))
        return false;
    fprintf(o, "<figure class=\"plot\" id=\"plot-%s\">\n", p->id);
    if (svg) {
        const char *s = strstr(svg, "<svg"); /* the XML prolog and doctype go */
        const char *end = strstr(s, "</svg>") + strlen("</svg>");
        const char *t = strstr(s, "<title>Gnuplot</title>");
        if (t && t < end) {
            svg_write(o, s, t, p->id);
            s = t + strlen("<title>Gnuplot</title>");
        }
        svg_write(o, s, end, p->id);
        fputc('\n', o);
        free(svg);
    }
    fprintf(o, "<figcaption>%s</figcaption>\n<details><summary>The plotted numbers</summary>\n", p->caption);
    fwrite(p->table, 1, p->tlen, o);
    fputs("\n</details></figure>\n", o);
    return true;
}

bool cbt_plot_emit(FILE *o, struct cbt_plot *p, const char *gnuplot)
{
    bool ok = plot_write(o, p, gnuplot);
    plot_free(p);
    return ok;
}
