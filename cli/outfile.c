/* Atomic text outputs (temporary file + rename). */
#include "outfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_out_open(cli_outfile *o, const char *path)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    if (snprintf(o->tmp, sizeof o->tmp, "%s.tmp.XXXXXX", path) >= (int)sizeof o->tmp) {
        fprintf(stderr, "tenfold: %s: path too long\n", path);
        return 1;
    }
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        fprintf(stderr, "tenfold: %s: cannot create a file there: %s\n", path, strerror(errno));
        return 1;
    }
    mode_t mask = umask(0); /* mkstemp makes 0600; give the usual 0666 & ~umask */
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    o->f = fdopen(fd, "w");
    if (!o->f) {
        fprintf(stderr, "tenfold: %s: %s\n", path, strerror(errno));
        close(fd);
        unlink(o->tmp);
        return 1;
    }
    return 0;
}

int cli_out_commit(cli_outfile *o)
{
    int bad = ferror(o->f);
    int err = bad ? EIO : 0;
    if (fflush(o->f) != 0 && !err) err = errno;
    if (fclose(o->f) != 0 && !err) err = errno;
    o->f = NULL;
    if (!err && rename(o->tmp, o->path) != 0) err = errno;
    if (err) {
        unlink(o->tmp);
        fprintf(stderr, "tenfold: %s: write failed: %s\n", o->path, strerror(err));
        return 1;
    }
    return 0;
}

void cli_out_abort(cli_outfile *o)
{
    if (o->f) fclose(o->f);
    o->f = NULL;
    if (o->tmp[0]) unlink(o->tmp);
}
