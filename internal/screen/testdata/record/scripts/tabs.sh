# Tab stops: the default every 8, HTS, TBC, CHT, CBT, and the margin.
printf 'a\tb\tc\td\te\tf\tg\th\ti\tj\tk\tl\n'
printf '1234567\tx\t\t\t\t\t\t\t\t\t\t\t\tend\n'     # tabs stop at the last column
printf '\033[3g'                                       # clear all
printf '\033[5G\033H\033[15G\033H\033[30G\033H\r'      # stops at 5, 15, 30
printf 'A\tB\tC\tD\n'
printf '\033[15G\033[g\r'                              # clear the one at 15
printf 'A\tB\tC\n'
printf '\033[3I*CHT3\n'
printf '\033[40G\033[Z<CBT \033[70G\033[2Z<CBT2\n'
printf '\033[3g\033[80G\033H'                          # only the last column
printf '\r\tat the end\n'
printf '\033[3g\033[9G\033H\033[17G\033H\r'               # 9 and 17 only
printf '\033[50G\033[Z!\033[Z\033[Z\033[Z?\ta\tb\tc\n'   # CBT past the first stop stops at column 1
