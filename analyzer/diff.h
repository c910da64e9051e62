/* diff.h — `convoy diff`. */
#ifndef CONVOY_DIFF_H
#define CONVOY_DIFF_H

int cmd_diff(int argc, char **argv);

#endif
