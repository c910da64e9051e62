/* outcome.c — how a launched command ended (outcome.h). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include <json-c/json.h>

#include "outcome.h"

void outcome__set(struct run_outcome *o, int status, int timed_out, double timeout_s, int hung, double watchdog_s)
{
	o->hung = hung;
	o->watchdog_s = watchdog_s;
	o->known = 1;
	o->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	o->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	o->timed_out = timed_out;
	o->timeout_s = timeout_s;
}

int outcome__failed(const struct run_outcome *o)
{
	return o->known && (o->exit_status != 0 || o->signal || o->timed_out || o->hung);
}

void outcome__sentence(const struct run_outcome *o, char *buf, size_t size)
{
	char how[96];
	if (o->signal)
		snprintf(how, sizeof(how), "was killed by signal %d (%s)", o->signal, strsignal(o->signal));
	else
		snprintf(how, sizeof(how), "exited with status %d", o->exit_status);
	if (!o->known)
		*buf = '\0';
	else if (o->timed_out)
		snprintf(buf, size, "The command ran past --timeout (%.0f s), was stopped and %s; "
			 "the profile covers it up to then.", o->timeout_s, how);
	else if (o->hung)
		snprintf(buf, size, "The command hung: every thread of one of its processes slept in a "
			 "synchronisation wait with no deadline, using no CPU, for %.0f s (CONVOY_WATCHDOG). "
			 "convoy stopped it and it %s; the profile covers it up to then.", o->watchdog_s, how);
	else
		snprintf(buf, size, "The command %s.", how);
}

void outcome__json(const struct run_outcome *o, json_object *obj)
{
	if (!o->known)
		return;
	json_object_object_add(obj, "exit_status", o->exit_status >= 0 ? json_object_new_int(o->exit_status) : NULL);
	json_object_object_add(obj, "signal", json_object_new_int(o->signal));
	json_object_object_add(obj, "timed_out", json_object_new_boolean(o->timed_out));
	json_object_object_add(obj, "hung", json_object_new_boolean(o->hung));
}

void outcome__from_json(struct run_outcome *o, json_object *obj)
{
	json_object *v;
	memset(o, 0, sizeof(*o));
	if (!json_object_object_get_ex(obj, "timed_out", &v) || !json_object_is_type(v, json_type_boolean))
		return;
	o->known = 1;
	o->timed_out = json_object_get_boolean(v);
	o->hung = json_object_object_get_ex(obj, "hung", &v) && json_object_get_boolean(v);
	o->exit_status = json_object_object_get_ex(obj, "exit_status", &v) && json_object_is_type(v, json_type_int) ?
				 json_object_get_int(v) : -1;
	o->signal = json_object_object_get_ex(obj, "signal", &v) && json_object_is_type(v, json_type_int) ?
			    json_object_get_int(v) : 0;
}
