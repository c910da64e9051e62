/* symshapes.c — a library of symbols in the shapes that make naming an
 * address hard: aliases of every binding in both orders, symbols nested in
 * others at the same start and inside them, local symbols where no global
 * one covers, labels without a size (global, weak and local) after sized
 * code and inside it, data the same way, and an absolute symbol that
 * wraps past the last address. tests/analyzer/symindex.c
 * names each of its bytes with the analyzer's index and with libdw. */

#define SHAPE(section, body) __asm__(".pushsection " section "\n" body "\n.popsection\n")

/* Aliases: one piece of code, two names, each pair declared in the other
 * order too (the table order decides among equals). */
SHAPE(".text",
      ".globl alias_global_first\n.weak alias_weak_second\n"
      ".type alias_global_first, @function\n.type alias_weak_second, @function\n"
      "alias_global_first:\nalias_weak_second:\n.fill 32, 1, 0x90\n"
      ".size alias_global_first, 32\n.size alias_weak_second, 32\n"
      ".weak alias_weak_first\n.globl alias_global_second\n"
      ".type alias_weak_first, @function\n.type alias_global_second, @function\n"
      "alias_weak_first:\nalias_global_second:\n.fill 32, 1, 0x90\n"
      ".size alias_weak_first, 32\n.size alias_global_second, 32\n"
      ".local alias_local\n.globl alias_with_local\n"
      ".type alias_local, @function\n.type alias_with_local, @function\n"
      "alias_local:\nalias_with_local:\n.fill 32, 1, 0x90\n"
      ".size alias_local, 32\n.size alias_with_local, 32\n");

/* Nesting: a smaller symbol at the same start, one inside, a local one
 * inside a global one, a weak one inside a global one. */
SHAPE(".text",
      ".globl nest_outer\n.globl nest_same_start\n.globl nest_inner\n.weak nest_weak_inner\n"
      ".type nest_outer, @function\n.type nest_same_start, @function\n"
      ".type nest_inner, @function\n.type nest_weak_inner, @function\n"
      ".type nest_local_inner, @function\n"
      "nest_outer:\nnest_same_start:\n.fill 16, 1, 0x90\n"
      "nest_inner:\n.fill 16, 1, 0x90\n"
      "nest_local_inner:\n.fill 16, 1, 0x90\n"
      "nest_weak_inner:\n.fill 16, 1, 0x90\n"
      ".size nest_outer, 64\n.size nest_same_start, 16\n.size nest_inner, 16\n"
      ".size nest_local_inner, 16\n.size nest_weak_inner, 16\n");

/* Pairs whose answer depends on which comes first in the table, which
 * the linker decides: several of each, so that both orders are met. A
 * global symbol with a weak one inside it; two at one start, one larger. */
#define ORDER_PAIR(n)                                                                           \
	SHAPE(".text",                                                                          \
	      ".globl order_outer" #n "\n.weak order_weak_inner" #n "\n"                        \
	      ".type order_outer" #n ", @function\n.type order_weak_inner" #n ", @function\n"   \
	      "order_outer" #n ":\n.fill 8, 1, 0x90\norder_weak_inner" #n ":\n.fill 16, 1, 0x90\n" \
	      ".size order_outer" #n ", 24\n.size order_weak_inner" #n ", 8\n"                   \
	      ".globl start_large" #n "\n.globl start_small" #n "\n"                            \
	      ".type start_large" #n ", @function\n.type start_small" #n ", @function\n"        \
	      "start_large" #n ":\nstart_small" #n ":\n.fill 24, 1, 0x90\n"                    \
	      ".size start_large" #n ", 24\n.size start_small" #n ", 8\n")
ORDER_PAIR(0);
ORDER_PAIR(1);
ORDER_PAIR(2);
ORDER_PAIR(3);
ORDER_PAIR(4);
ORDER_PAIR(5);
ORDER_PAIR(6);
ORDER_PAIR(7);

/* A weak symbol that starts below a global one and covers it. */
SHAPE(".text",
      ".weak span_weak\n.globl span_global_later\n"
      ".type span_weak, @function\n.type span_global_later, @function\n"
      "span_weak:\n.fill 24, 1, 0x90\nspan_global_later:\n.fill 24, 1, 0x90\n"
      ".size span_weak, 48\n.size span_global_later, 16\n");

/* Only local symbols: the second pass. One with a global label inside. */
SHAPE(".text",
      ".type only_local, @function\nonly_local:\n.fill 32, 1, 0x90\n.size only_local, 32\n"
      ".type local_around_label, @function\nlocal_around_label:\n.fill 16, 1, 0x90\n"
      ".globl global_label_inside\nglobal_label_inside:\n.fill 16, 1, 0x90\n"
      ".size local_around_label, 32\n");

/* Labels without a size after sized code, of each binding, and a label
 * that a sized symbol ends past. */
SHAPE(".text",
      ".type sized_before_labels, @function\n.globl sized_before_labels\n"
      "sized_before_labels:\n.fill 8, 1, 0x90\n.size sized_before_labels, 8\n"
      ".globl label_global\nlabel_global:\n.fill 8, 1, 0x90\n"
      ".weak label_weak\nlabel_weak:\n.fill 8, 1, 0x90\n"
      "label_local:\n.fill 8, 1, 0x90\n"
      ".globl label_shadowed\n.type long_over_label, @function\n.globl long_over_label\n"
      "long_over_label:\n.fill 4, 1, 0x90\nlabel_shadowed:\n.fill 12, 1, 0x90\n.size long_over_label, 8\n"
      ".globl label_then_gap\nlabel_then_gap:\n.fill 8, 1, 0x90\n");

/* Data: objects, aliases and labels. */
SHAPE(".data",
      ".globl data_object\n.type data_object, @object\ndata_object:\n.fill 24, 1, 0\n.size data_object, 24\n"
      ".globl data_alias\n.weak data_weak_alias\n.type data_alias, @object\n.type data_weak_alias, @object\n"
      "data_alias:\ndata_weak_alias:\n.fill 16, 1, 0\n.size data_alias, 16\n.size data_weak_alias, 16\n"
      ".type data_local, @object\ndata_local:\n.fill 16, 1, 0\n.size data_local, 16\n"
      ".globl data_label\ndata_label:\n.fill 16, 1, 0\n");

/* An absolute symbol whose end wraps past the last address. */
SHAPE(".data", ".globl wraps_past_the_end\n.type wraps_past_the_end, @object\n"
      ".set wraps_past_the_end, 0xffffffffffffff00\n.size wraps_past_the_end, 0x200\n");

/* Referenced, so that the library is what a program would map. */
int symshapes_marker(void)
{
	return 1;
}
