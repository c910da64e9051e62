/* export.h — `convoy export`: a profile in other tools' formats. */
#ifndef CONVOY_EXPORT_H
#define CONVOY_EXPORT_H

int cmd_export(int argc, char **argv);

#endif
