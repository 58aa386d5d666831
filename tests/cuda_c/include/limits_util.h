#pragma once
#define LIMIT 10.0f
