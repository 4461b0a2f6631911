/** @file stdbool.h */
#ifndef KERN_STDBOOL_H_
#define KERN_STDBOOL_H_

#define bool _Bool
#define true 1
#define false 0

#endif
