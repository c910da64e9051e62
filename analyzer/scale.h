/* scale.h — `convoy scale`. */
#ifndef CONVOY_SCALE_H
#define CONVOY_SCALE_H

int cmd_scale(int argc, char **argv);

#endif
