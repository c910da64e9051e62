/* view.h — `convoy view`. */
#ifndef CONVOY_VIEW_H
#define CONVOY_VIEW_H

int cmd_view(int argc, char **argv);

#endif
