/*
 * cubatchtrace (the tool): the commands that live in a file of their own;
 * main.c dispatches to them.  Each parses its own command line and returns
 * the exit status.
 */
#ifndef CBT_COMMANDS_H
#define CBT_COMMANDS_H

int cbt_cmd_run(int argc, char **argv);  /* run.c */
int cbt_cmd_show(int argc, char **argv); /* show.c */

#endif
