/* SPDX-License-Identifier: BSD-3-Clause */
/* One entry point per `tenfold <command>`; each returns the process exit
 * code (0 ok, 1 failure, 2 usage error) and prints its own --help. */
#ifndef TF_CLI_COMMANDS_H
#define TF_CLI_COMMANDS_H
int cmd_cpd(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_mttkrp(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_sddmm(int argc, char **argv);
int cmd_ttm(int argc, char **argv);
int cmd_tucker(int argc, char **argv);
int cmd_complete(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_split(int argc, char **argv);
#endif
